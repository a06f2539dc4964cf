/** The SQLite binding in use (see sqlite-driver.ts): better-sqlite3's objects are the driver's, unwrapped. */
import Database from 'better-sqlite3';
import type { Connection, OpenSqliteFile } from './sqlite-driver.js';

// better-sqlite3 types `prepare` with a conditional answer (named parameters as an object), which
// TypeScript cannot match to the driver's positional one; the methods the driver lists are the same.
export const openBetterSqlite3: OpenSqliteFile = (file, { busyTimeoutMs }) => new Database(file, { timeout: busyTimeoutMs }) as unknown as Connection;
