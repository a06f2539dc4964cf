/**
 * Two `PostgresStorage` instances on one schema stand for two Divan nodes: asked at the same time
 * to bring one view index up to date, one builds it and the other finds it built (the advisory lock
 * of `ViewStore.exclusive`), so every document is mapped once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DesignDoc } from '../../../src/js/sandbox.js';
import { testSandbox } from '../../support/js-sandbox.js';
import type { JsonObject } from '../../../src/json/json.js';
import { Logger } from '../../../src/log/logger.js';
import { openPostgresStorage, type PostgresStorage } from '../../../src/storage/postgres/postgres-storage.js';
import { ActiveTasks } from '../../../src/tasks/active-tasks.js';
import { updateIndex } from '../../../src/views/indexer.js';
import type { ViewFunctions } from '../../../src/views/view-functions.js';
import { viewGroupOf } from '../../../src/views/view-group.js';
import { OPEN_SECURITY, POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../../support/backends.js';

const DOCS = 300;

describe('postgres: two nodes share one view index', { skip: POSTGRES_SKIP_REASON }, () => {
  const url = POSTGRES_TEST_URL as string;
  const schema = uniqueSchema();
  const sandbox = testSandbox();
  let a: PostgresStorage;
  let b: PostgresStorage;
  let mapped = 0;
  /** The real sandbox, counting the documents it is asked to map. */
  const functions: ViewFunctions = {
    map: (ddoc, path, docs) => ((mapped += docs.length), sandbox.map('db', ddoc as DesignDoc, path, docs)),
    call: (ddoc, path, argLists) => sandbox.call('db', ddoc as DesignDoc, path, argLists),
  };

  before(async () => {
    [a, b] = await Promise.all([openPostgresStorage({ url, schema, poolSize: 4 }), openPostgresStorage({ url, schema, poolSize: 4 })]);
    await a.createDatabase('db', OPEN_SECURITY);
    await a.writeDocuments('db', Array.from({ length: DOCS }, (_, i) => ({ id: `d${i}`, body: { n: i }, deleted: false })), { newEdits: true });
  });
  after(async () => {
    await Promise.all([a.close(), b.close(), sandbox.close()]);
    await dropSchema(url, schema);
  });

  it('maps every document once when both nodes update at the same time', async () => {
    const ddoc: JsonObject = { _id: '_design/d', _rev: '1-x', views: { v: { map: 'function (doc) { emit(doc.n, null); }' } } };
    const group = viewGroupOf(ddoc);
    const context = (storage: PostgresStorage) => ({ storage, functions, tasks: new ActiveTasks(() => 'node'), log: new Logger('none') });
    const [seqA, seqB] = await Promise.all([updateIndex(context(a), 'db', group), updateIndex(context(b), 'db', group)]);
    assert.equal(seqA, DOCS);
    assert.equal(seqB, DOCS);
    assert.equal(mapped, DOCS);
    const rows = await b.views.rows('db', group.signature, { view: 0, inclusiveEnd: true, descending: false, skip: 0 });
    assert.equal(rows.totalRows, DOCS);
  });
});
