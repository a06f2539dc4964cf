import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { MIGRATIONS, SCHEMA_VERSION, migrate } from '../../../../src/storage/postgres/postgres-schema.js';
import { openPostgresStorage } from '../../../../src/storage/postgres/postgres-storage.js';
import { accessListings, writeAccessDocuments } from '../../../support/access-backfill.js';
import { POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../../../support/backends.js';

const url = POSTGRES_TEST_URL as string;

async function query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe('postgres migrations', { skip: POSTGRES_SKIP_REASON }, () => {
  let schema: string;
  beforeEach(() => {
    schema = uniqueSchema();
  });
  afterEach(async () => {
    await dropSchema(url, schema);
  });

  it('lets 5 nodes start at once on a fresh schema, applying each step once', async () => {
    const storages = await Promise.all(Array.from({ length: 5 }, () => openPostgresStorage({ url, schema, poolSize: 2 })));
    try {
      const versions = await query<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`);
      assert.deepEqual(
        versions.map((row) => row.version),
        MIGRATIONS.map((step) => step.version),
      );
      // Every node works on the same tables.
      assert.equal(await storages[0].createDatabase('db', {}), true);
      for (const storage of storages.slice(1)) assert.deepEqual(await storage.listDatabases(), ['db']);
    } finally {
      await Promise.all(storages.map((storage) => storage.close()));
    }
  });

  it('applies the steps exactly once when migrate races on 5 connections', async () => {
    const clients = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        return client;
      }),
    );
    try {
      const applied = await Promise.all(clients.map((client) => migrate(client, schema)));
      assert.deepEqual(applied.flat(), MIGRATIONS.map((step) => step.version));
      assert.deepEqual(await migrate(clients[0], schema), [], 'nothing left to do');
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  });

  it('fills the per-principal rows of documents written before they existed, the rows the writes keep', async () => {
    const storage = await openPostgresStorage({ url, schema });
    const rowsSql = `SELECT db_id::int AS db_id, principal, id, seq::int AS seq, deleted FROM "${schema}".access_rows ORDER BY db_id, principal, id`;
    let listed: unknown[];
    try {
      await writeAccessDocuments(storage);
      listed = await accessListings(storage);
    } finally {
      await storage.close();
    }
    const kept = await query(rowsSql);
    assert.equal(kept.length, 8, JSON.stringify(kept));
    // A schema of the version before the rows: no rows at all.
    await query(`DELETE FROM "${schema}".access_rows; DELETE FROM "${schema}".schema_migrations WHERE version = 10`);
    const upgraded = await openPostgresStorage({ url, schema });
    try {
      assert.deepEqual(await accessListings(upgraded), listed);
    } finally {
      await upgraded.close();
    }
    assert.deepEqual(await query(rowsSql), kept);
  });

  it('upgrades a version 1 schema in place: its leaf bodies stay readable leaves, nothing to compact', async () => {
    const rev = `1-${'a'.repeat(32)}`;
    const tree = JSON.stringify({ [rev]: { parent: null, deleted: false } });
    await query(`CREATE SCHEMA "${schema}"`);
    await query(
      `SET search_path TO "${schema}"; ${MIGRATIONS[0].sql};
       CREATE TABLE schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
       INSERT INTO schema_migrations (version, description) VALUES (1, 'v1');
       INSERT INTO databases (name, security, data_size, instance_start_time) VALUES ('db', '{}', 7, '1');
       INSERT INTO documents (db_id, id, tree, winner, deleted, seq) SELECT db_id, 'doc', '${tree}', '${rev}', false, 1 FROM databases;
       INSERT INTO leaf_bodies (doc_pk, rev, body) SELECT doc_pk, '${rev}', '{"v":1}' FROM documents;`,
    );
    const storage = await openPostgresStorage({ url, schema });
    try {
      assert.deepEqual((await storage.readDocument('db', 'doc'))?.body, { v: 1 });
      assert.equal((await storage.databaseInfo('db'))?.compactableSize, 0);
      assert.equal(await storage.compact('db'), 0);
      assert.deepEqual((await storage.readDocument('db', 'doc', { rev }))?.body, { v: 1 }, 'the leaf survives compaction');
    } finally {
      await storage.close();
    }
  });

  it('upgrades a schema whose search catalog was created on first use: its indexes stay, the step is recorded', async () => {
    await query(`CREATE SCHEMA "${schema}"`);
    const before = MIGRATIONS.filter((step) => step.version < 10);
    await query(
      `SET search_path TO "${schema}"; ${before.map((step) => step.sql).join(';\n')};
       CREATE TABLE schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
       INSERT INTO schema_migrations (version, description) VALUES ${before.map((step) => `(${step.version}, 'old')`).join(', ')};
       INSERT INTO databases (name, security, data_size, instance_start_time) VALUES ('db', '{}', 0, '1');
       CREATE TABLE IF NOT EXISTS search_indexes (index_id bigserial PRIMARY KEY, db_id bigint NOT NULL,
         signature text NOT NULL, update_seq bigint NOT NULL DEFAULT 0, UNIQUE (db_id, signature));
       INSERT INTO search_indexes (db_id, signature, update_seq) SELECT db_id, 'sig', 5 FROM databases;
       CREATE TABLE search_docs_1 (doc_id text COLLATE "C" PRIMARY KEY);
       INSERT INTO search_docs_1 (doc_id) VALUES ('doc');`,
    );
    const storage = await openPostgresStorage({ url, schema });
    try {
      assert.deepEqual(await storage.search.list('db'), [{ signature: 'sig', updateSeq: 5, docs: 1 }]);
    } finally {
      await storage.close();
    }
    const versions = await query<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`);
    assert.deepEqual(versions.map((row) => row.version), MIGRATIONS.map((step) => step.version));
  });

  it('creates the tables in the schema only, with byte-order collation', async () => {
    const storage = await openPostgresStorage({ url, schema });
    await storage.close();
    const tables = await query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [schema],
    );
    assert.deepEqual(
      tables.map((row) => row.table_name),
      ['access_rows', 'attachment_blobs', 'attachment_chunks', 'attachment_refs', 'databases', 'documents', 'id_blocks', 'local_documents', 'lockout_attempts', 'lockout_failures', 'mango_index_rows', 'mango_indexes', 'purged_infos', 'revision_bodies', 'schema_migrations', 'search_indexes', 'view_indexes'],
    );
    const collations = await query<{ column_name: string; collation_name: string | null }>(
      `SELECT table_name || '.' || column_name AS column_name, collation_name FROM information_schema.columns
       WHERE table_schema = $1 AND data_type = 'text' AND column_name IN ('name', 'id') ORDER BY 1`,
      [schema],
    );
    assert.ok(collations.length >= 3);
    assert.ok(collations.every((row) => row.collation_name === 'C'), JSON.stringify(collations));
  });

  it('refuses a schema migrated by a newer version', async () => {
    const storage = await openPostgresStorage({ url, schema });
    await storage.close();
    await query(`INSERT INTO "${schema}".schema_migrations (version, description) VALUES ($1, 'from the future')`, [
      SCHEMA_VERSION + 1,
    ]);
    await assert.rejects(openPostgresStorage({ url, schema }), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.match(error.message, /newer than this Divan supports/);
      assert.ok(!error.message.includes('\n'));
      return true;
    });
  });
});
