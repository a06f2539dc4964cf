import Database from 'better-sqlite3';

export type Connection = Database.Database;
export type Statement = Database.Statement<unknown[], unknown>;
export type Transaction<F extends (...args: never[]) => unknown> = Database.Transaction<F>;

// Tables are keyed by an internal database id that is never reused (AUTOINCREMENT), so a database
// deleted and created again starts empty at update_seq 0 even if a delete was interrupted.
// Only leaf revisions keep a body; the whole revision tree of a document is one JSON value.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS databases (
  db_id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  security TEXT NOT NULL,
  update_seq INTEGER NOT NULL DEFAULT 0,
  doc_count INTEGER NOT NULL DEFAULT 0,
  deleted_doc_count INTEGER NOT NULL DEFAULT 0,
  data_size INTEGER NOT NULL DEFAULT 0,
  instance_start_time TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
  doc_pk INTEGER PRIMARY KEY,
  db_id INTEGER NOT NULL,
  id TEXT NOT NULL,
  tree TEXT NOT NULL,
  winner TEXT NOT NULL,
  deleted INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  UNIQUE (db_id, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS documents_by_seq ON documents (db_id, seq);
CREATE INDEX IF NOT EXISTS live_documents ON documents (db_id, id) WHERE deleted = 0;
CREATE TABLE IF NOT EXISTS leaf_bodies (
  doc_pk INTEGER NOT NULL,
  rev TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (doc_pk, rev)
);
CREATE TABLE IF NOT EXISTS local_documents (
  db_id INTEGER NOT NULL,
  id TEXT NOT NULL,
  rev INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (db_id, id)
);
PRAGMA user_version = 1;
`;

const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) the server's SQLite file with the settings durability depends on.
 * Throws a one-line `Error` naming the file when it cannot be opened or initialised.
 */
export function openConnection(file: string): Connection {
  let db: Connection | undefined;
  try {
    db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    // SQLite opens lazily: a read-only directory only shows up at the first write, so the
    // pragmas and the schema belong inside the same try.
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`journal mode is ${String(mode)}, WAL is required`);
    // FULL: with WAL, NORMAL may lose the last commits on power loss; a write is acknowledged
    // only once it survives that.
    db.pragma('synchronous = FULL');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec(SCHEMA);
    return db;
  } catch (error) {
    db?.close();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot open database file ${file}: ${reason.split('\n')[0]}`);
  }
}
