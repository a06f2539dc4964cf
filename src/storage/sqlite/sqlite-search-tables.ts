/**
 * The tables of one SQLite search index (sqlite-search.ts says what each holds), shared by the
 * store (queries, on the main thread) and its writer (sqlite-search-writes.ts, in a thread).
 */
/** FTS5 tokenizers by name; `tokenizerOf` maps a Nouveau analyzer to one. */
export const TOKENIZERS: Readonly<Record<string, string>> = {
  plain: 'unicode61 remove_diacritics 0',
  porter: 'porter unicode61 remove_diacritics 0',
  folded: 'unicode61 remove_diacritics 2',
};

export function tokenizerOf(analyzer: string): string {
  if (analyzer === 'english') return 'porter';
  return analyzer === 'simple_asciifolding' ? 'folded' : 'plain';
}

/** A text row's rowid: its field's number times this, plus its document's pk. */
export const PK_SPAN = 2 ** 40;
/** Field numbers past which the rowid leaves JavaScript's exact integers (then computed as BigInt). */
const EXACT_FIELDS = Math.floor(Number.MAX_SAFE_INTEGER / PK_SPAN);

export const textRowid = (no: number, pk: number): number | bigint => (no < EXACT_FIELDS ? no * PK_SPAN + pk : BigInt(no) * BigInt(PK_SPAN) + BigInt(pk));

export const tableNames = (id: number) => ({
  docs: `search_docs_${id}`,
  values: `search_values_${id}`,
  fields: `search_fields_${id}`,
  /** The side table of an earlier layout (dropped with the index). */
  text: `search_text_${id}`,
  fts: (tokenizer: string) => `search_fts_${id}_${tokenizer}`,
  /** The connection's own (temp) fts5vocab table of an FTS5 table: its terms, for fuzzy and regex queries. */
  vocab: (tokenizer: string) => `temp.search_vocab_${tokenizer}_${id}`,
});

/** The statements that drop one search index's tables. */
export function dropSearchTables(id: number): string {
  const t = tableNames(id);
  return [t.docs, t.values, t.fields, t.text, ...Object.keys(TOKENIZERS).flatMap((name) => [t.vocab(name), t.fts(name)])].map((name) => `DROP TABLE IF EXISTS ${name};`).join('\n');
}
