/**
 * One batch of a SQLite search index's update (sqlite-search.ts says what the tables hold), run by
 * the search writer's thread (sqlite-search-writer-thread.ts) inside its transaction: each
 * document's old rows removed and its fields stored, and the index's sequence recorded.
 */
import type { SearchDocument, SearchFieldType } from '../search-store.js';
import type { StatementCache } from './sqlite-statement-cache.js';
import { tableNames, textRowid, tokenizerOf, TOKENIZERS } from './sqlite-search-tables.js';

/** Each field's number, a new one (recorded with the field's first type) for a field not seen before. */
function fieldNumbers(statements: StatementCache, table: string): (field: string, type: SearchFieldType) => number {
  const rows = statements.get(`SELECT field, no FROM ${table}`).all() as { field: string; no: number }[];
  const numbers = new Map(rows.map((row) => [row.field, row.no]));
  let next = rows.reduce((highest, row) => Math.max(highest, row.no), 0) + 1;
  const insert = statements.get(`INSERT INTO ${table} (field, type, no) VALUES (?, ?, ?)`);
  return (field, type) => {
    let no = numbers.get(field);
    if (no === undefined) {
      no = next++;
      insert.run(field, type, no);
      numbers.set(field, no);
    }
    return no;
  };
}

export function applySearchUpdate(statements: StatementCache, id: number, documents: readonly SearchDocument[], updateSeq: number): void {
  const t = tableNames(id);
  // Which documents are indexed already, in one statement per batch.
  const ids = JSON.stringify(documents.map((document) => document.id));
  const indexed = new Map((statements.get(`SELECT pk, doc_id, texts FROM ${t.docs} WHERE doc_id IN (SELECT value FROM json_each(?))`).all(ids) as { pk: number; doc_id: string; texts: string }[]).map((row) => [row.doc_id, row]));
  const numbers = fieldNumbers(statements, t.fields);
  // One FTS5 row at a time, by rowid: an FTS5 table does not index `rowid IN (subquery)`.
  const removeText = new Map(Object.keys(TOKENIZERS).map((name) => [name, statements.get(`DELETE FROM ${t.fts(name)} WHERE rowid = ?`)]));
  const insertFts = new Map(Object.keys(TOKENIZERS).map((name) => [name, statements.get(`INSERT INTO ${t.fts(name)} (rowid, body) VALUES (?, ?)`)]));
  const removals = [t.values, t.docs].map((table) => statements.get(`DELETE FROM ${table} WHERE doc_id = ?`));
  const insertDoc = statements.get(`INSERT INTO ${t.docs} (doc_id, texts) VALUES (?, ?)`);
  const insertValue = statements.get(`INSERT INTO ${t.values} (doc_id, n, field, type, str, num, stored) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  for (const document of documents) {
    // Every row of a document hangs off its `docs` row: a document never indexed has nothing to remove.
    const known = indexed.get(document.id);
    if (known !== undefined) {
      for (const [no, tokenizer] of JSON.parse(known.texts) as [number, string][]) removeText.get(tokenizer)!.run(textRowid(no, known.pk));
      for (const statement of removals) statement.run(document.id);
    }
    if (document.fields.length === 0) continue;
    const texts = new Map<number, { tokenizer: string; values: string[] }>();
    document.fields.forEach((field, n) => {
      const no = numbers(field.name, field.type);
      if (field.type === 'text') {
        const text = texts.get(no);
        if (text === undefined) texts.set(no, { tokenizer: tokenizerOf(field.analyzer ?? 'standard'), values: [String(field.value)] });
        else text.values.push(String(field.value));
      }
      if (field.type !== 'text' || field.store) {
        const num = typeof field.value === 'number' ? field.value : null;
        insertValue.run(document.id, n, field.name, field.type, num === null ? field.value : null, num, field.store ? 1 : 0);
      }
    });
    const pk = Number(insertDoc.run(document.id, JSON.stringify([...texts].map(([no, text]) => [no, text.tokenizer]))).lastInsertRowid);
    for (const [no, text] of texts) insertFts.get(text.tokenizer)!.run(textRowid(no, pk), text.values.join('\n'));
  }
  statements.get('UPDATE search_indexes SET update_seq = ? WHERE index_id = ?').run(updateSeq, id);
}
