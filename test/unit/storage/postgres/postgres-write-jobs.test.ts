/**
 * Which PostgreSQL transactions of document writes wait for the WAL flush: a slice of a larger
 * write but its last commits with `synchronous_commit = off`, anything else with the default.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { openPostgresStorage, type PostgresStorage } from '../../../../src/storage/postgres/postgres-storage.js';
import { executeBatch, type WriteJob } from '../../../../src/storage/postgres/postgres-write-jobs.js';
import { DEFAULT_DOCUMENT_LIMITS } from '../../../../src/storage/storage.js';
import { OPEN_SECURITY, POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../../../support/backends.js';

const url = POSTGRES_TEST_URL as string;

describe('postgres: durability of a batch of document writes', { skip: POSTGRES_SKIP_REASON }, () => {
  let schema: string;
  let storage: PostgresStorage;
  let client: pg.Client;
  let next = 0;

  before(async () => {
    schema = uniqueSchema();
    storage = await openPostgresStorage({ url, schema, poolSize: 2 });
    await storage.createDatabase('db', OPEN_SECURITY);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`SET search_path TO "${schema}"`);
  });
  after(async () => {
    await client.end();
    await storage.close();
    await dropSchema(url, schema);
  });

  const documents = (durable: boolean): WriteJob => ({ kind: 'documents', edits: [{ id: `d${next++}`, body: {}, deleted: false }], newEdits: true, limits: DEFAULT_DOCUMENT_LIMITS, durable });

  /** `synchronous_commit` inside the batch's transaction after `executeBatch` ran. */
  async function settingAfter(jobs: WriteJob[]): Promise<string> {
    await client.query('BEGIN');
    try {
      const outcomes = await executeBatch(client as unknown as pg.PoolClient, 'db', jobs);
      assert.ok(outcomes.every((outcome) => outcome.ok));
      return (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit;
    } finally {
      await client.query('ROLLBACK');
    }
  }

  it('does not wait for the flush when every job is a non-final slice', async () => {
    assert.equal(await settingAfter([documents(false), documents(false)]), 'off');
  });

  it('waits for it when one job of the batch is answered on this commit', async () => {
    assert.equal(await settingAfter([documents(false), documents(true)]), 'on');
    assert.equal(await settingAfter([documents(false), { kind: 'security', security: OPEN_SECURITY }]), 'on');
  });
});
