// Each new pooled connection gets its `search_path` before its first query: never two queries at
// once on one client (pg warns of it, and pg 9 refuses it), whatever the load on a fresh pool.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openPostgresStorage, type PostgresStorage } from '../../../../src/storage/postgres/postgres-storage.js';
import { OPEN_SECURITY, POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../../../support/backends.js';

const CONCURRENT_USE = /already executing a query/;

describe('the PostgreSQL pool', { skip: POSTGRES_TEST_URL === undefined ? `no PostgreSQL: ${POSTGRES_SKIP_REASON}` : false }, () => {
  const url = POSTGRES_TEST_URL!;
  const schema = uniqueSchema();
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  let setup: PostgresStorage;

  before(async () => {
    process.on('warning', onWarning);
    setup = await openPostgresStorage({ url, schema, poolSize: 1 });
    assert.equal(await setup.createDatabase('pooled', OPEN_SECURITY), true);
    await setup.close();
  });

  after(async () => {
    process.off('warning', onWarning);
    await dropSchema(url, schema);
  });

  it('hands out each new connection with its search_path set, no query of its own still running', async () => {
    const storage = await openPostgresStorage({ url, schema, poolSize: 8 });
    try {
      // Every connection but the migration's is new: each one's first query arrives as the pool hands it out.
      const infos = await Promise.all(Array.from({ length: 40 }, () => storage.databaseInfo('pooled')));
      assert.ok(infos.every((info) => info?.docCount === 0), 'every connection reads the schema of the storage');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings.filter((warning) => CONCURRENT_USE.test(warning.message)).map((warning) => warning.message), []);
    } finally {
      await storage.close();
    }
  });
});
