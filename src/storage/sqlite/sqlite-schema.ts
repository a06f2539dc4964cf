/**
 * Versioned schema of the SQLite backend, brought up to date at every open; `user_version` holds
 * the version reached. The PostgreSQL twin is postgres/postgres-schema.ts: the same tables and
 * columns at the same version, so both backends decode their rows the same way.
 *
 * A step is never edited once released: a schema change is a new step with the next version.
 */
import type { Connection } from './sqlite-driver.js';

// Tables are keyed by an internal database id that is never reused (AUTOINCREMENT), so a database
// deleted and created again starts empty at update_seq 0 even if a delete was interrupted.
// The whole revision tree of a document is one JSON value.
export const MIGRATIONS: readonly string[] = [
  // 1: databases, documents, leaf bodies, local documents.
  `
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
`,
  // 2: bodies of superseded revisions are kept until compaction (every existing body is a leaf's).
  `
ALTER TABLE leaf_bodies RENAME TO revision_bodies;
ALTER TABLE revision_bodies ADD COLUMN leaf INTEGER NOT NULL DEFAULT 1;
CREATE INDEX superseded_bodies ON revision_bodies (doc_pk) WHERE leaf = 0;
ALTER TABLE databases ADD COLUMN compactable_size INTEGER NOT NULL DEFAULT 0;
`,
  // 3: Mango json indexes: how far each has caught up, and one row per indexed document (key bytes).
  `
CREATE TABLE mango_indexes (
  db_id INTEGER NOT NULL,
  signature TEXT NOT NULL,
  indexed_seq INTEGER NOT NULL,
  PRIMARY KEY (db_id, signature)
);
CREATE TABLE mango_index_rows (
  db_id INTEGER NOT NULL,
  signature TEXT NOT NULL,
  key BLOB NOT NULL,
  id TEXT NOT NULL,
  PRIMARY KEY (db_id, signature, key, id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX mango_index_rows_by_id ON mango_index_rows (db_id, signature, id);
`,
  // 4: per-database _revs_limit and _purged_infos_limit, the purge sequence and the purge history.
  `
ALTER TABLE databases ADD COLUMN revs_limit INTEGER NOT NULL DEFAULT 1000;
ALTER TABLE databases ADD COLUMN purged_infos_limit INTEGER NOT NULL DEFAULT 1000;
ALTER TABLE databases ADD COLUMN purge_seq INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS purged_infos (
  db_id INTEGER NOT NULL,
  purge_seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  revs TEXT NOT NULL,
  PRIMARY KEY (db_id, purge_seq)
);
`,
  // 5: attachment data, content-addressed per database, counted by the bodies naming it (its chunks
  // are in the attached chunk file, sqlite-chunk-file.ts).
  `
CREATE TABLE attachment_blobs (
  blob_id INTEGER PRIMARY KEY AUTOINCREMENT,
  db_id INTEGER NOT NULL,
  digest TEXT,
  length INTEGER NOT NULL DEFAULT 0,
  refs INTEGER NOT NULL DEFAULT 0,
  created INTEGER NOT NULL
);
CREATE UNIQUE INDEX attachment_blobs_by_digest ON attachment_blobs (db_id, digest);
CREATE INDEX unreferenced_blobs ON attachment_blobs (db_id, created) WHERE refs = 0;
CREATE TABLE attachment_refs (
  doc_pk INTEGER NOT NULL,
  rev TEXT NOT NULL,
  digest TEXT NOT NULL,
  PRIMARY KEY (doc_pk, rev, digest)
);
`,
  // 6: map/reduce view indexes, one per (database, design-document signature); each has a
  // view_rows_{index_id} table of its own, created with the index (sqlite-views.ts).
  `
CREATE TABLE view_indexes (
  index_id INTEGER PRIMARY KEY AUTOINCREMENT,
  db_id INTEGER NOT NULL,
  signature TEXT NOT NULL,
  update_seq INTEGER NOT NULL DEFAULT 0,
  UNIQUE (db_id, signature)
);
`,
  // 7: per-principal orders of the documents (storage/access-store.ts): by id, by sequence, and by
  // document (to replace a document's rows when it changes).
  `
CREATE TABLE access_rows (
  db_id INTEGER NOT NULL,
  principal TEXT NOT NULL,
  id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  PRIMARY KEY (db_id, principal, id)
) WITHOUT ROWID;
CREATE INDEX access_rows_by_seq ON access_rows (db_id, principal, seq);
-- id first: a (db_id, …) index would tempt a planner without statistics to scan a whole database
-- for one user's listing instead of seeking their principal in the primary key.
CREATE INDEX access_rows_by_document ON access_rows (id, db_id);
`,
  // 8: live documents counted per block of ids (kit/id-blocks.ts, kept by the writer in its
  // transaction) and per group of blocks: `_all_docs` offsets sum groups and blocks and count inside
  // one block instead of counting every id before the start key. Existing databases get blocks of
  // 1 024 live documents in groups of 64 blocks.
  `
CREATE TABLE id_blocks (
  db_id INTEGER NOT NULL,
  first_id TEXT NOT NULL,
  live INTEGER NOT NULL,
  PRIMARY KEY (db_id, first_id)
) WITHOUT ROWID;
INSERT INTO id_blocks (db_id, first_id, live)
  SELECT db_id, CASE WHEN block = 0 THEN '' ELSE min(id) END, count(*)
  FROM (SELECT db_id, id, (row_number() OVER (PARTITION BY db_id ORDER BY id) - 1) / 1024 AS block FROM documents WHERE deleted = 0)
  GROUP BY db_id, block;
CREATE TABLE id_groups (
  db_id INTEGER NOT NULL,
  first_id TEXT NOT NULL,
  live INTEGER NOT NULL,
  PRIMARY KEY (db_id, first_id)
) WITHOUT ROWID;
INSERT INTO id_groups (db_id, first_id, live)
  SELECT db_id, CASE WHEN grp = 0 THEN '' ELSE min(first_id) END, sum(live)
  FROM (SELECT db_id, first_id, live, (row_number() OVER (PARTITION BY db_id ORDER BY first_id) - 1) / 64 AS grp FROM id_blocks)
  GROUP BY db_id, grp;
`,
  // 9: the per-principal rows of documents written before version 7 (kit/access-rows.ts computes
  // the same rows for a write): every design document under the empty principal, every other one
  // under each name of its winning revision's `_access` when that is a list of strings.
  `
INSERT OR IGNORE INTO access_rows (db_id, principal, id, seq, deleted)
SELECT db_id, '', id, seq, deleted FROM documents WHERE substr(id, 1, 8) = '_design/';
INSERT OR IGNORE INTO access_rows (db_id, principal, id, seq, deleted)
SELECT DISTINCT d.db_id, p.value, d.id, d.seq, d.deleted
FROM documents d
JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner
JOIN json_each(b.body, '$._access') p
WHERE substr(d.id, 1, 8) <> '_design/'
  AND instr(b.body, '"_access"') > 0
  AND json_type(b.body, '$._access') = 'array'
  AND p.type = 'text' AND p.value <> ''
  AND NOT EXISTS (SELECT 1 FROM json_each(b.body, '$._access') q WHERE q.type <> 'text');
`,
  // 10: full-text search indexes, one per (database, index signature); each has tables of its own,
  // created with the index (sqlite-search.ts). IF NOT EXISTS: before this step the search store
  // created the catalog on first use, so an older file may have it already.
  `
CREATE TABLE IF NOT EXISTS search_indexes (
  index_id INTEGER PRIMARY KEY AUTOINCREMENT,
  db_id INTEGER NOT NULL,
  signature TEXT NOT NULL,
  update_seq INTEGER NOT NULL DEFAULT 0,
  UNIQUE (db_id, signature)
);
`,
];

/** The latest schema version this code knows. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Applies the steps after the file's `user_version`, all in one transaction (an interrupted
 * migration leaves the file as it was). Refuses a file already migrated by a newer Divan.
 */
export function migrate(db: Connection): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new Error(`schema is at version ${version}, newer than this Divan supports (${SCHEMA_VERSION})`);
  }
  if (version === SCHEMA_VERSION) return;
  db.transaction(() => {
    for (const step of MIGRATIONS.slice(version)) db.exec(step);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
