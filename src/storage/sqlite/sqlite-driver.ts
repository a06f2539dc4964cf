/**
 * What the SQLite backend needs of a SQLite binding: synchronous statements, transaction functions
 * (nested calls become savepoints) and pragmas. `better-sqlite3-driver.ts` is the binding in use and
 * the only file that imports one; another binding (`node:sqlite`) is one more file like it.
 */

interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface Statement<Params extends unknown[] = unknown[], Row = unknown> {
  run(...params: Params): RunResult;
  get(...params: Params): Row | undefined;
  all(...params: Params): Row[];
  /** Rows as their first column's value. */
  pluck(toggle?: boolean): this;
  /** True when the statement returns rows (a query), false for a write. */
  readonly reader: boolean;
}

/** A function run in a transaction: plain calls nest as savepoints; `immediate` takes the write lock first. */
export interface Transaction<F extends (...args: never[]) => unknown> {
  (...args: Parameters<F>): ReturnType<F>;
  immediate(...args: Parameters<F>): ReturnType<F>;
}

export interface Connection {
  /** The file's path. */
  readonly name: string;
  readonly inTransaction: boolean;
  prepare<Params extends unknown[] = unknown[], Row = unknown>(sql: string): Statement<Params, Row>;
  transaction<F extends (...args: never[]) => unknown>(work: F): Transaction<F>;
  exec(sql: string): unknown;
  /** `simple`: the first column of the first row instead of every row. */
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
}

/** Opens (creating if needed) a SQLite file; a busy database is retried for `busyTimeoutMs`. */
export type OpenSqliteFile = (file: string, options: { busyTimeoutMs: number }) => Connection;
