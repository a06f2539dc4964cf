/**
 * The SQLite search store (search-store.ts): a `search_indexes` catalog row (sqlite-schema.ts) per (database,
 * signature) and per index `search_docs_{id}` (indexed documents: a number `pk`, the id, and the
 * field numbers and tokenizers of its text rows), `search_values_{id}` (string, double and stored
 * values), `search_fields_{id}` (each field's first type and its number) and the text: FTS5 tables
 * `search_fts_{id}_{tokenizer}`, one per tokenizer the Nouveau analyzers map to (docs/search.md),
 * with one row per document and text field, its values joined by a line break (as Lucene reads a
 * field given several values: one field, its length the sum). A text row's rowid is the field's
 * number times 2^40 plus the document's `pk`: a query on one field reads only that field's rowid
 * range, and rows of one field follow each other as the documents do, which keeps FTS5's
 * delta-encoded lists small. The FTS5 tables are contentless (`contentless_delete`): the index keeps
 * terms, positions and lengths, not the text, which the documents hold. An index of an earlier
 * layout (its `docs` rows without `pk`) is built again on open. Relevance is FTS5's `bm25`. Tables
 * are created and dropped through the storage's write queue; batches are stored by the search
 * writer's thread (sqlite-search-writer.ts).
 */
import type { SearchAnswer, SearchDocument, SearchFieldType, SearchIndexInfo, SearchRequest, SearchStore } from '../search-store.js';
import { searchAnswer } from '../kit/search-answer.js';
import type { Param, SearchDialect } from '../kit/search-sql.js';
import type { Connection, Statement } from './sqlite-connection.js';
import type { WriteQueue } from './sqlite-write-queue.js';
import { openBetterSqlite3 } from './better-sqlite3-driver.js';
import { holding, type NamedLocks } from '../../locks/named-locks.js';
import { StatementCache } from './sqlite-statement-cache.js';
import { SqliteIndexCatalog } from './sqlite-index-catalog.js';
import { dropSearchTables, PK_SPAN, tableNames, tokenizerOf, TOKENIZERS } from './sqlite-search-tables.js';
import { SearchWriter } from './sqlite-search-writer.js';

function dialectOf(id: number): SearchDialect {
  const t = tableNames(id);
  return {
    docs: t.docs,
    fieldValues: t.values,
    text: (leaf, param: Param) => {
      const fts = t.fts(tokenizerOf(leaf.analyzer));
      // Placeholders are positional: each use of the field's number takes its own.
      const no = () => `(SELECT no FROM ${t.fields} WHERE field = ${param(leaf.field)})`;
      // FTS5's rank (bm25, lower is better) is only readable in a plain query of the FTS5 table:
      // the LIMIT keeps SQLite from flattening it into the query around it.
      return (
        `SELECT d.doc_id, -f.rank AS score FROM (SELECT rowid, rank FROM ${fts} WHERE ${fts} MATCH ${param(leaf.match)}` +
        ` AND rowid >= ${no()} * ${PK_SPAN} AND rowid < (${no()} + 1) * ${PK_SPAN} LIMIT -1) AS f JOIN ${t.docs} d ON d.pk = f.rowid % ${PK_SPAN}`
      );
    },
    // GLOB's own special character `[` is escaped as a one-character class.
    wildcard: (pattern, param) => `str GLOB ${param(pattern.replaceAll('[', '[[]'))}`,
  };
}

export class SqliteSearchStore implements SearchStore {
  readonly textSyntax = 'fts5';
  readonly #db: Connection;
  readonly #queue: WriteQueue;
  readonly #catalog: SqliteIndexCatalog;
  readonly #locks: NamedLocks;
  readonly #statements: StatementCache;
  /** Indexes whose tables were found to have this layout. */
  readonly #checked = new Set<number>();
  /** An in-memory database for `analyze`, opened on first use. */
  #analyzer: Connection | undefined;
  readonly #writer: SearchWriter;

  constructor(db: Connection, queue: WriteQueue, databaseId: (name: string) => number, locks: NamedLocks) {
    this.#db = db;
    this.#writer = new SearchWriter(db.name);
    this.#statements = new StatementCache(db);
    this.#queue = queue;
    this.#catalog = new SqliteIndexCatalog(this.#statements, databaseId, 'search_indexes', 'search');
    this.#locks = locks;
  }

  #statement(sql: string): Statement {
    return this.#statements.get(sql);
  }

  /** Drops the cached statements naming the index's tables (whole names: `_1` is not `_12`). */
  #forget(id: number): void {
    this.#statements.forget(new RegExp(`\\bsearch_\\w+?_${id}\\b`));
  }

  /** Whether index `id`'s tables have this layout (checked once per index and process). */
  #current(id: number): boolean {
    if (this.#checked.has(id)) return true;
    const columns = this.#statement(`SELECT name FROM pragma_table_info('${tableNames(id).docs}')`).pluck().all() as string[];
    if (!columns.includes('pk')) return false;
    this.#checked.add(id);
    return true;
  }

  async open(db: string, signature: string): Promise<number> {
    const known = this.#catalog.find(db, signature);
    if (known !== undefined && this.#current(known.index_id)) return known.update_seq;
    return this.#queue.enqueue(() => {
      const again = this.#catalog.find(db, signature);
      if (again !== undefined && this.#current(again.index_id)) return again.update_seq;
      if (again !== undefined) this.#remove(again.index_id);
      const id = this.#catalog.add(db, signature);
      const t = tableNames(id);
      this.#db.exec(dropSearchTables(id));
      this.#forget(id);
      this.#db.exec(
        `CREATE TABLE ${t.docs} (pk INTEGER PRIMARY KEY, doc_id TEXT NOT NULL UNIQUE, texts TEXT NOT NULL);
         CREATE TABLE ${t.values} (doc_id TEXT NOT NULL, n INTEGER NOT NULL, field TEXT NOT NULL, type TEXT NOT NULL, str TEXT, num REAL,
           stored INTEGER NOT NULL, PRIMARY KEY (doc_id, n)) WITHOUT ROWID;
         CREATE INDEX ${t.values}_str ON ${t.values} (field, str);
         CREATE INDEX ${t.values}_num ON ${t.values} (field, num);
         CREATE TABLE ${t.fields} (field TEXT PRIMARY KEY, type TEXT NOT NULL, no INTEGER NOT NULL UNIQUE) WITHOUT ROWID;
         ${Object.entries(TOKENIZERS).map(([name, tokenize]) => `CREATE VIRTUAL TABLE ${t.fts(name)} USING fts5(body, tokenize = '${tokenize}', content = '', contentless_delete = 1);`).join('\n')}`,
      );
      this.#checked.add(id);
      return 0;
    });
  }

  /**
   * Stores a batch in the search writer's thread (sqlite-search-writer.ts) while the main thread
   * goes on (reading and running the next batch). The thread's transaction takes SQLite's write
   * lock itself: the write queue's batches meanwhile find it busy and try again, as they do for any
   * writer outside the lease (sqlite-write-queue.ts).
   */
  update(db: string, signature: string, documents: readonly SearchDocument[], updateSeq: number): Promise<void> {
    const { index_id: id } = this.#catalog.existing(db, signature);
    return this.#writer.update(id, documents, updateSeq);
  }

  /** Stops the writer's thread (once its batches are done). */
  close(): Promise<void> {
    return this.#writer.close();
  }

  async fieldTypes(db: string, signature: string): Promise<Map<string, SearchFieldType>> {
    const { index_id: id } = this.#catalog.existing(db, signature);
    const rows = this.#statement(`SELECT field, type FROM ${tableNames(id).fields}`).all() as { field: string; type: SearchFieldType }[];
    return new Map(rows.map((row) => [row.field, row.type]));
  }

  async search(db: string, signature: string, request: SearchRequest): Promise<SearchAnswer> {
    const dialect = dialectOf(this.#catalog.existing(db, signature).index_id);
    return searchAnswer(dialect, request, async (sql, params) => this.#statement(sql).all(...params) as Record<string, unknown>[]);
  }

  async vocabulary(db: string, signature: string, field: string, type: 'text' | 'string', analyzer: string): Promise<string[]> {
    const t = tableNames(this.#catalog.existing(db, signature).index_id);
    if (type === 'string') return this.#statement(`SELECT DISTINCT str FROM ${t.values} WHERE field = ? AND type = 'string'`).pluck().all(field) as string[];
    const tokenizer = tokenizerOf(analyzer);
    this.#db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${t.vocab(tokenizer)} USING fts5vocab(main, ${t.fts(tokenizer)}, row)`);
    return this.#statement(`SELECT term FROM ${t.vocab(tokenizer)}`).pluck().all() as string[];
  }

  /**
   * The terms of `text` as the analyzer's FTS5 tokenizer makes them, in order: the text in an FTS5
   * table of an in-memory database, read back through its `fts5vocab` instance table.
   */
  async analyze(analyzer: string, text: string): Promise<string[]> {
    const tokenizer = tokenizerOf(analyzer);
    if (this.#analyzer === undefined) {
      const db = openBetterSqlite3(':memory:', { busyTimeoutMs: 0 });
      db.exec(Object.entries(TOKENIZERS).map(([name, tokenize]) => `CREATE VIRTUAL TABLE a_${name} USING fts5(body, tokenize = '${tokenize}');
        CREATE VIRTUAL TABLE v_${name} USING fts5vocab(a_${name}, instance);`).join('\n'));
      this.#analyzer = db;
    }
    const db = this.#analyzer;
    return db.transaction(() => {
      db.prepare(`INSERT INTO a_${tokenizer} (rowid, body) VALUES (1, ?)`).run(text);
      const terms = db.prepare(`SELECT term FROM v_${tokenizer} ORDER BY "offset"`).pluck().all() as string[];
      db.prepare(`DELETE FROM a_${tokenizer} WHERE rowid = 1`).run();
      return terms;
    })();
  }

  async list(db: string): Promise<SearchIndexInfo[]> {
    const indexes = this.#catalog.all(db);
    return indexes.map((index) => ({
      signature: index.signature,
      updateSeq: index.update_seq,
      docs: (this.#statement(`SELECT count(*) AS c FROM ${tableNames(index.index_id).docs}`).get() as { c: number }).c,
    }));
  }

  drop(db: string, signatures: readonly string[]): Promise<number> {
    return this.#queue.enqueue(() => {
      let dropped = 0;
      for (const signature of signatures) {
        const index = this.#catalog.find(db, signature);
        if (index === undefined) continue;
        this.#remove(index.index_id);
        dropped++;
      }
      return dropped;
    });
  }

  /** Drops an index's tables and catalog row (in a write-queue job). */
  #remove(id: number): void {
    this.#forget(id);
    this.#checked.delete(id);
    this.#db.exec(dropSearchTables(id));
    this.#catalog.remove(id);
  }

  async exclusive<T>(db: string, signature: string, work: () => Promise<T>): Promise<T> {
    return holding(this.#locks, `search\u0000${db}\u0000${signature}`, work);
  }
}

