/**
 * Versioned schema of the PostgreSQL backend. Every node runs `migrate` when it starts: the steps
 * run in one transaction that first takes a transaction-scoped advisory lock, so nodes starting at
 * the same time wait for each other and each step is applied exactly once.
 *
 * A step is never edited once released: a schema change is a new step with the next version.
 */
import { ID_BLOCKS_SQL } from './postgres-id-blocks.js';
import type { ClientBase } from 'pg';
import { quoteIdentifier } from './postgres-connection.js';

interface Migration {
  version: number;
  description: string;
  /** One or more statements, run with `search_path` set to the target schema. */
  sql: string;
}

/**
 * Advisory-lock class shared by every Divan node ('DIVA' in ASCII); the second key is a hash of
 * the schema name, so nodes migrating different schemas of one database do not wait for each other.
 */
const MIGRATION_LOCK_CLASS = 0x44495641;

// Tables are keyed by an internal database id that is never reused (identity), so a database deleted
// and created again starts empty at update_seq 0. The whole revision tree of a document is one JSON text. Bodies stay `text` (not jsonb) so they come back byte for byte,
// key order included. Names, ids and revs use COLLATE "C": byte order of UTF-8, as CouchDB sorts ids.
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'databases, documents, leaf bodies, local documents',
    sql: `
CREATE TABLE databases (
  db_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text COLLATE "C" NOT NULL UNIQUE,
  security text NOT NULL,
  update_seq bigint NOT NULL DEFAULT 0,
  doc_count bigint NOT NULL DEFAULT 0,
  deleted_doc_count bigint NOT NULL DEFAULT 0,
  data_size bigint NOT NULL DEFAULT 0,
  instance_start_time text NOT NULL
);
CREATE TABLE documents (
  doc_pk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  db_id bigint NOT NULL,
  id text COLLATE "C" NOT NULL,
  tree text NOT NULL,
  winner text COLLATE "C" NOT NULL,
  deleted boolean NOT NULL,
  seq bigint NOT NULL,
  UNIQUE (db_id, id)
);
CREATE UNIQUE INDEX documents_by_seq ON documents (db_id, seq);
CREATE INDEX live_documents ON documents (db_id, id) WHERE NOT deleted;
CREATE TABLE leaf_bodies (
  doc_pk bigint NOT NULL,
  rev text COLLATE "C" NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (doc_pk, rev)
);
CREATE TABLE local_documents (
  db_id bigint NOT NULL,
  id text COLLATE "C" NOT NULL,
  rev bigint NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (db_id, id)
);
`,
  },
  {
    version: 2,
    description: 'bodies of superseded revisions are kept until compaction',
    // Every body stored by version 1 is a leaf's.
    sql: `
ALTER TABLE leaf_bodies RENAME TO revision_bodies;
ALTER TABLE revision_bodies ADD COLUMN leaf boolean NOT NULL DEFAULT true;
CREATE INDEX superseded_bodies ON revision_bodies (doc_pk) WHERE NOT leaf;
ALTER TABLE databases ADD COLUMN compactable_size bigint NOT NULL DEFAULT 0;
`,
  },
  {
    version: 3,
    description: 'Mango json indexes: their sequence and one row per indexed document',
    sql: `
CREATE TABLE mango_indexes (
  db_id bigint NOT NULL,
  signature text COLLATE "C" NOT NULL,
  indexed_seq bigint NOT NULL,
  PRIMARY KEY (db_id, signature)
);
CREATE TABLE mango_index_rows (
  db_id bigint NOT NULL,
  signature text COLLATE "C" NOT NULL,
  key bytea NOT NULL,
  id text COLLATE "C" NOT NULL,
  PRIMARY KEY (db_id, signature, key, id)
);
CREATE UNIQUE INDEX mango_index_rows_by_id ON mango_index_rows (db_id, signature, id);
`,
  },
  {
    version: 4,
    description: 'per-database _revs_limit and _purged_infos_limit, the purge sequence and the purge history',
    sql: `
ALTER TABLE databases ADD COLUMN revs_limit integer NOT NULL DEFAULT 1000;
ALTER TABLE databases ADD COLUMN purged_infos_limit integer NOT NULL DEFAULT 1000;
ALTER TABLE databases ADD COLUMN purge_seq bigint NOT NULL DEFAULT 0;
CREATE TABLE purged_infos (
  db_id bigint NOT NULL,
  purge_seq bigint NOT NULL,
  id text COLLATE "C" NOT NULL,
  revs text NOT NULL,
  PRIMARY KEY (db_id, purge_seq)
);
`,
  },
  {
    version: 5,
    description: 'attachment data in chunks, content-addressed per database, counted by the bodies naming it',
    sql: `
CREATE TABLE attachment_blobs (
  blob_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  db_id bigint NOT NULL,
  digest text COLLATE "C",
  length bigint NOT NULL DEFAULT 0,
  refs bigint NOT NULL DEFAULT 0,
  created bigint NOT NULL
);
CREATE UNIQUE INDEX attachment_blobs_by_digest ON attachment_blobs (db_id, digest);
CREATE INDEX unreferenced_blobs ON attachment_blobs (db_id, created) WHERE refs = 0;
CREATE TABLE attachment_chunks (
  blob_id bigint NOT NULL,
  idx integer NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (blob_id, idx)
);
ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE TABLE attachment_refs (
  doc_pk bigint NOT NULL,
  rev text COLLATE "C" NOT NULL,
  digest text COLLATE "C" NOT NULL,
  PRIMARY KEY (doc_pk, rev, digest)
);
`,
  },
  {
    version: 6,
    description: 'map/reduce view indexes',
    // Each index has a view_rows_{index_id} table of its own, created with the index (postgres-views.ts).
    sql: `
CREATE TABLE view_indexes (
  index_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  db_id bigint NOT NULL,
  signature text COLLATE "C" NOT NULL,
  update_seq bigint NOT NULL DEFAULT 0,
  UNIQUE (db_id, signature)
);
`,
  },
  {
    version: 7,
    description: 'the cluster-wide password lockout',
    // Read and written under a per-key advisory lock by cluster/pg-lockout.ts; keys are SHA-256 hex.
    sql: `
CREATE TABLE lockout_attempts (
  attempt_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  key text COLLATE "C" NOT NULL,
  node text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX lockout_attempts_by_key ON lockout_attempts (key);
CREATE TABLE lockout_failures (
  key text COLLATE "C" NOT NULL,
  failed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX lockout_failures_by_key ON lockout_failures (key, failed_at);
`,
  },
  {
    version: 8,
    description: 'live documents counted per block of ids',
    sql: ID_BLOCKS_SQL,
  },
  {
    version: 9,
    description: 'per-principal orders of the documents (storage/access-store.ts)',
    sql: `
CREATE TABLE access_rows (
  db_id bigint NOT NULL,
  principal text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  deleted boolean NOT NULL,
  PRIMARY KEY (db_id, principal, id)
);
CREATE INDEX access_rows_by_seq ON access_rows (db_id, principal, seq);
-- id first: a (db_id, …) index would tempt a planner without statistics to scan a whole database
-- for one user's listing instead of seeking their principal in the primary key.
CREATE INDEX access_rows_by_document ON access_rows (id, db_id);
`,
  },
  {
    version: 10,
    description: 'the per-principal rows of documents written before version 9',
    // As kit/access-rows.ts computes them for a write: design documents under the empty principal,
    // every other one under each name of its winning revision's `_access` when that is a list of
    // strings. PostgreSQL's json parser refuses a \u0000 escape anywhere in a body: each one (not
    // an escaped backslash followed by "u0000") is read as \ufffd, which no principal needs.
    sql: `
INSERT INTO access_rows (db_id, principal, id, seq, deleted)
SELECT db_id, '', id, seq, deleted FROM documents WHERE left(id, 8) = '_design/'
ON CONFLICT DO NOTHING;
WITH accessed AS (
  SELECT d.db_id, d.id, d.seq, d.deleted,
    (CASE WHEN strpos(b.body, '\\u0000') > 0 THEN regexp_replace(b.body, '(?<!\\\\)((?:\\\\\\\\)*)\\\\u0000', '\\1\\\\ufffd', 'g') ELSE b.body END)::json -> '_access' AS access
  FROM documents d
  JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner
  WHERE left(d.id, 8) <> '_design/' AND strpos(b.body, '"_access"') > 0
), listed AS (
  SELECT * FROM accessed
  WHERE json_typeof(access) = 'array'
    AND NOT EXISTS (SELECT 1 FROM json_array_elements(access) item WHERE json_typeof(item) <> 'string')
)
INSERT INTO access_rows (db_id, principal, id, seq, deleted)
SELECT DISTINCT l.db_id, p.principal, l.id, l.seq, l.deleted
FROM listed l, json_array_elements_text(l.access) AS p(principal)
WHERE p.principal <> ''
ON CONFLICT DO NOTHING;
`,
  },
  {
    version: 11,
    description: 'full-text search indexes',
    // Each index has tables of its own, created with the index (postgres-search.ts). IF NOT EXISTS:
    // before this step the search store created the catalog on first use, so an older schema may have it.
    sql: `
CREATE TABLE IF NOT EXISTS search_indexes (
  index_id bigserial PRIMARY KEY,
  db_id bigint NOT NULL,
  signature text NOT NULL,
  update_seq bigint NOT NULL DEFAULT 0,
  UNIQUE (db_id, signature)
);
`,
  },
];

/** The latest schema version this code knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/**
 * Brings `schema` (created when missing) up to `SCHEMA_VERSION` on `client`, which must not be in a
 * transaction. Returns the versions applied by this call (empty when another node got there first).
 * Refuses a schema already migrated by a newer Divan.
 */
export async function migrate(client: ClientBase, schema: string): Promise<number[]> {
  const quoted = quoteIdentifier(schema);
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1::int4, hashtext($2))', [MIGRATION_LOCK_CLASS, schema]);
    // CREATE SCHEMA IF NOT EXISTS checks the CREATE privilege even when the schema exists, so look first:
    // a role that may only use an existing schema can still start.
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${quoted}`);
    await client.query(`SET LOCAL search_path TO ${quoted}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY,
         description text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((row) => row.version));
    const newest = Math.max(0, ...done);
    if (newest > SCHEMA_VERSION) {
      throw new Error(`schema "${schema}" is at version ${newest}, newer than this Divan supports (${SCHEMA_VERSION})`);
    }
    const applied: number[] = [];
    for (const step of MIGRATIONS) {
      if (done.has(step.version)) continue;
      await client.query(step.sql);
      await client.query('INSERT INTO schema_migrations (version, description) VALUES ($1, $2)', [
        step.version,
        step.description,
      ]);
      applied.push(step.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
