/**
 * The SQLite view store: a `view_indexes` catalog row per (database, signature) and a
 * `view_rows_{index_id}` table per index, clustered on (view, key, doc_id, n) (WITHOUT ROWID), so a
 * range is one index scan; a narrow index on (view, key, num) answers `offset` counts and the
 * aggregates of the built-in reduces without reading the keys' and values' JSON. Writes share the storage's write queue (group commit).
 */
import type {
  MappedDocument,
  ViewAggregate,
  ViewIndexInfo,
  ViewRange,
  ViewRowsResult,
  ViewStore,
} from '../view-store.js';
import { AnswerCache, aggregateColumns, aggregateOf, beforeStart, rangeConditions } from '../view-store.js';
import type { Connection, Statement } from './sqlite-connection.js';
import type { WriteQueue } from './sqlite-write-queue.js';
import type { NamedLocks } from '../../locks/named-locks.js';

interface IndexRow {
  index_id: number;
  signature: string;
  update_seq: number;
}

const table = (indexId: number): string => `view_rows_${indexId}`;

/** Drops the view tables of a database (inside the caller's write transaction). */
export function dropViewIndexesOf(db: Connection, dbId: number): void {
  const indexes = db.prepare('SELECT index_id FROM view_indexes WHERE db_id = ?').pluck().all(dbId) as number[];
  for (const indexId of indexes) db.exec(`DROP TABLE IF EXISTS ${table(indexId)}`);
  db.prepare('DELETE FROM view_indexes WHERE db_id = ?').run(dbId);
}

export class SqliteViewStore implements ViewStore {
  readonly #db: Connection;
  readonly #queue: WriteQueue;
  readonly #databaseId: (name: string) => number;
  readonly #statements = new Map<string, Statement>();
  readonly #locks: NamedLocks;
  readonly #totals = new Map<string, { seq: number; rows: number }>();
  readonly #aggregates = new AnswerCache<ViewAggregate[]>();
  readonly #offsets = new AnswerCache<number>();

  constructor(db: Connection, queue: WriteQueue, databaseId: (name: string) => number, locks: NamedLocks) {
    this.#db = db;
    this.#queue = queue;
    this.#databaseId = databaseId;
    this.#locks = locks;
  }

  #statement(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare<unknown[], unknown>(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #index(db: string, signature: string): IndexRow | undefined {
    return this.#statement('SELECT index_id, signature, update_seq FROM view_indexes WHERE db_id = ? AND signature = ?').get(this.#databaseId(db), signature) as IndexRow | undefined;
  }

  #existing(db: string, signature: string): IndexRow {
    const index = this.#index(db, signature);
    if (index === undefined) throw new Error(`no view index ${signature} in ${db}`);
    return index;
  }

  async open(db: string, signature: string): Promise<number> {
    const known = this.#index(db, signature);
    if (known !== undefined) return known.update_seq;
    return this.#queue.enqueue(() => {
      const dbId = this.#databaseId(db);
      const again = this.#index(db, signature);
      if (again !== undefined) return again.update_seq;
      const indexId = Number(this.#statement('INSERT INTO view_indexes (db_id, signature) VALUES (?, ?)').run(dbId, signature).lastInsertRowid);
      this.#db.exec(
        `CREATE TABLE ${table(indexId)} (view INTEGER NOT NULL, key BLOB NOT NULL, doc_id TEXT NOT NULL, n INTEGER NOT NULL,
           key_json TEXT NOT NULL, value TEXT NOT NULL, num REAL, PRIMARY KEY (view, key, doc_id, n)) WITHOUT ROWID;
         CREATE INDEX ${table(indexId)}_docs ON ${table(indexId)} (doc_id);
         CREATE INDEX ${table(indexId)}_sums ON ${table(indexId)} (view, key, num);`,
      );
      return 0;
    });
  }

  update(db: string, signature: string, documents: readonly MappedDocument[], updateSeq: number): Promise<void> {
    return this.#queue.enqueue(() => {
      const { index_id: indexId } = this.#existing(db, signature);
      const remove = this.#statement(`DELETE FROM ${table(indexId)} WHERE doc_id = ?`);
      const insert = this.#statement(`INSERT INTO ${table(indexId)} (view, key, doc_id, n, key_json, value, num) VALUES (?, ?, ?, ?, ?, ?, ?)`);
      for (const document of documents) {
        remove.run(document.id);
        document.rows.forEach((row, n) => insert.run(row.view, row.key, document.id, n, row.keyJson, row.valueJson, row.num));
      }
      this.#statement('UPDATE view_indexes SET update_seq = ? WHERE index_id = ?').run(updateSeq, indexId);
    });
  }

  /** Rows of a view, counted once per update of the index. */
  #totalRows(name: string, seq: number, view: number): number {
    const key = `${name}/${view}`;
    const known = this.#totals.get(key);
    if (known !== undefined && known.seq === seq) return known.rows;
    const rows = (this.#statement(`SELECT count(*) AS c FROM ${name} WHERE view = ?`).get(view) as { c: number }).c;
    if (this.#totals.size > 10_000) this.#totals.clear();
    this.#totals.set(key, { seq, rows });
    return rows;
  }

  async rows(db: string, signature: string, range: ViewRange): Promise<ViewRowsResult> {
    const index = this.#existing(db, signature);
    const name = table(index.index_id);
    const params: unknown[] = [];
    const param = (value: unknown): string => (params.push(value), '?');
    const where = rangeConditions(range, param);
    const order = range.descending ? 'DESC' : 'ASC';
    const sql = `SELECT key, key_json, doc_id, value FROM ${name} WHERE ${where} ORDER BY key ${order}, doc_id ${order}, n ${order} LIMIT ? OFFSET ?`;
    const raw = this.#statement(sql).all(...params, range.limit ?? -1, range.skip) as { key: Buffer; key_json: string; doc_id: string; value: string }[];
    const countParams: unknown[] = [];
    const before = beforeStart(range, (value) => (countParams.push(value), '?'));
    const countSql = `SELECT count(*) AS c FROM ${name} WHERE ${before}`;
    const rowsBefore = await this.#offsets.get(name, index.update_seq, countSql, countParams, () => (this.#statement(countSql).get(...countParams) as { c: number }).c);
    const total = { c: this.#totalRows(name, index.update_seq, range.view) };
    return {
      totalRows: total.c,
      offset: rowsBefore + range.skip,
      rows: raw.map((row) => ({ key: JSON.parse(row.key_json), id: row.doc_id, value: JSON.parse(row.value), encoded: row.key })),
    };
  }

  async aggregate(db: string, signature: string, range: ViewRange, grouped = false): Promise<ViewAggregate[]> {
    const index = this.#existing(db, signature);
    const name = table(index.index_id);
    const params: unknown[] = [];
    const where = rangeConditions(range, (value) => (params.push(value), '?'));
    const order = range.descending ? 'DESC' : 'ASC';
    const tail = grouped ? ` GROUP BY key ORDER BY key ${order} LIMIT ? OFFSET ?` : '';
    if (grouped) params.push(range.limit ?? -1, range.skip);
    const sql = `SELECT ${aggregateColumns(grouped, (e) => `total(${e})`)} FROM ${name} WHERE ${where}${tail}`;
    return this.#aggregates.get(name, index.update_seq, sql, params, () => (this.#statement(sql).all(...params) as Record<string, unknown>[]).map(aggregateOf));
  }

  async list(db: string): Promise<ViewIndexInfo[]> {
    const indexes = this.#statement('SELECT index_id, signature, update_seq FROM view_indexes WHERE db_id = ? ORDER BY signature').all(this.#databaseId(db)) as IndexRow[];
    return indexes.map((index) => ({
      signature: index.signature,
      updateSeq: index.update_seq,
      rows: (this.#statement(`SELECT count(*) AS c FROM ${table(index.index_id)}`).get() as { c: number }).c,
    }));
  }

  drop(db: string, signatures: readonly string[]): Promise<number> {
    return this.#queue.enqueue(() => {
      let dropped = 0;
      for (const signature of signatures) {
        const index = this.#index(db, signature);
        if (index === undefined) continue;
        for (const sql of [...this.#statements.keys()]) if (sql.includes(table(index.index_id))) this.#statements.delete(sql);
        this.#db.exec(`DROP TABLE IF EXISTS ${table(index.index_id)}`);
        this.#statement('DELETE FROM view_indexes WHERE index_id = ?').run(index.index_id);
        dropped++;
      }
      return dropped;
    });
  }

  /** One updater per index across the worker processes sharing the file (the server's named locks). */
  async exclusive<T>(db: string, signature: string, work: () => Promise<T>): Promise<T> {
    const release = await this.#locks.acquire(`view\u0000${db}\u0000${signature}`);
    try {
      return await work();
    } finally {
      release();
    }
  }
}
