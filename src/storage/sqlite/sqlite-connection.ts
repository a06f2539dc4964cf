import { openBetterSqlite3 } from './better-sqlite3-driver.js';
import { attachChunkFile, chunkFileOf } from './sqlite-chunk-file.js';
import type { Connection } from './sqlite-driver.js';
import { migrate } from './sqlite-schema.js';

export type { Connection, Statement, Transaction } from './sqlite-driver.js';

const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) the server's SQLite file with the settings durability depends on.
 * Throws a one-line `Error` naming the file when it cannot be opened or initialised.
 */
export function openConnection(file: string): Connection {
  let db: Connection | undefined;
  try {
    db = openBetterSqlite3(file, { busyTimeoutMs: BUSY_TIMEOUT_MS });
    // SQLite opens lazily: a read-only directory only shows up at the first write, so the
    // pragmas and the schema belong inside the same try.
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`journal mode is ${String(mode)}, WAL is required`);
    // FULL: with WAL, NORMAL may lose the last commits on power loss; a write is acknowledged
    // only once it survives that.
    db.pragma('synchronous = FULL');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    migrate(db);
    attachChunkFile(db, chunkFileOf(file));
    return db;
  } catch (error) {
    db?.close();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot open database file ${file}: ${reason.split('\n')[0]}`);
  }
}
