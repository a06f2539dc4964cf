/**
 * The catalog rows of the per-index stores (`view_indexes`, `search_indexes`, sqlite-schema.ts):
 * one row per (database, signature) with the sequence the index reached; its `index_id` names the
 * index's own tables.
 */
import type { StatementCache } from './sqlite-statement-cache.js';

export interface IndexRow {
  index_id: number;
  signature: string;
  update_seq: number;
}

export class SqliteIndexCatalog {
  readonly #statements: StatementCache;
  readonly #databaseId: (name: string) => number;
  readonly #table: string;
  readonly #kind: string;

  /** `kind` names the index in the error of a missing one ("view", "search"). */
  constructor(statements: StatementCache, databaseId: (name: string) => number, table: 'view_indexes' | 'search_indexes', kind: string) {
    this.#statements = statements;
    this.#databaseId = databaseId;
    this.#table = table;
    this.#kind = kind;
  }

  find(db: string, signature: string): IndexRow | undefined {
    return this.#statements.get(`SELECT index_id, signature, update_seq FROM ${this.#table} WHERE db_id = ? AND signature = ?`).get(this.#databaseId(db), signature) as IndexRow | undefined;
  }

  existing(db: string, signature: string): IndexRow {
    const index = this.find(db, signature);
    if (index === undefined) throw new Error(`no ${this.#kind} index ${signature} in ${db}`);
    return index;
  }

  /** The database's indexes, by signature. */
  all(db: string): IndexRow[] {
    return this.#statements.get(`SELECT index_id, signature, update_seq FROM ${this.#table} WHERE db_id = ? ORDER BY signature`).all(this.#databaseId(db)) as IndexRow[];
  }

  /** A new row at sequence 0; answers its id (inside the caller's write). */
  add(db: string, signature: string): number {
    return Number(this.#statements.get(`INSERT INTO ${this.#table} (db_id, signature) VALUES (?, ?)`).run(this.#databaseId(db), signature).lastInsertRowid);
  }

  reached(indexId: number, updateSeq: number): void {
    this.#statements.get(`UPDATE ${this.#table} SET update_seq = ? WHERE index_id = ?`).run(updateSeq, indexId);
  }

  remove(indexId: number): void {
    this.#statements.get(`DELETE FROM ${this.#table} WHERE index_id = ?`).run(indexId);
  }
}
