/**
 * Statements prepared once per SQL text, for the stores whose SQL is built from options or names
 * per-index tables (`_all_docs`, `_changes`, the access, view and search stores).
 */
import type { Connection, Statement } from './sqlite-connection.js';

export class StatementCache {
  readonly #db: Connection;
  readonly #cache = new Map<string, Statement>();

  constructor(db: Connection) {
    this.#db = db;
  }

  /** The statement of `sql`, prepared on first use; `pluck` answers each row's first column. */
  get(sql: string, pluck = false): Statement {
    let statement = this.#cache.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare<unknown[], unknown>(sql);
      if (pluck) statement.pluck();
      this.#cache.set(sql, statement);
    }
    return statement;
  }

  /** Drops the statements whose SQL `names` matches (those naming a dropped table). */
  forget(names: RegExp): void {
    for (const sql of [...this.#cache.keys()]) if (names.test(sql)) this.#cache.delete(sql);
  }
}
