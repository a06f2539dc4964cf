/**
 * Schema of the SQLite backend, applied at every open (`IF NOT EXISTS`); `user_version` numbers it.
 * The PostgreSQL twin is postgres/postgres-schema.ts: the same tables and columns, so both backends
 * decode their rows the same way.
 */
// Tables are keyed by an internal database id that is never reused (AUTOINCREMENT), so a database
// deleted and created again starts empty at update_seq 0 even if a delete was interrupted.
// Only leaf revisions keep a body; the whole revision tree of a document is one JSON value.
export const SCHEMA = `
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
