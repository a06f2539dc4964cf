/**
 * Two Divan nodes on one PostgreSQL share each json index: queries on both nodes at once build it
 * together (each batch is stored once, by whichever node gets there first), writes through one node
 * show in the other's next query, and the index never holds a row twice or misses one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dropSchema, POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, uniqueSchema } from '../support/backends.js';
import { startServer, type TestServer } from '../support/server.js';

const DOCS = 3500;

describe('Mango on a cluster (two nodes on one PostgreSQL)', { skip: POSTGRES_TEST_URL === undefined ? `no PostgreSQL: ${POSTGRES_SKIP_REASON}` : false }, () => {
  const schema = uniqueSchema();
  let nodeA: TestServer;
  let nodeB: TestServer;
  before(async () => {
    const ini = ['[divan]', 'storage = postgres', `postgres_url = ${POSTGRES_TEST_URL}`, `postgres_schema = ${schema}`].join('\n');
    nodeA = await startServer({ ini });
    nodeB = await startServer({ ini });
    await nodeA.admin('/shared', { method: 'PUT' });
    const docs = Array.from({ length: DOCS }, (_, i) => ({ _id: `d${i}`, n: i, group: i % 7 }));
    assert.equal((await nodeA.admin('/shared/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    await nodeB.admin('/shared/_index', { method: 'POST', body: { index: { fields: ['group', 'n'] }, ddoc: 'g' } });
  });
  after(async () => {
    await nodeA?.close();
    await nodeB?.close();
    await dropSchema(POSTGRES_TEST_URL!, schema);
  });

  const count = async (node: TestServer, group: number): Promise<number> => {
    const res = await node.admin('/shared/_find', { method: 'POST', body: { selector: { group, n: { $gte: 0 } }, limit: DOCS, execution_stats: true } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.warning, undefined);
    assert.equal(res.body.execution_stats.total_keys_examined, res.body.docs.length, 'only the rows of the range are read, each once');
    return res.body.docs.length;
  };

  test('queries on both nodes at once build one index with every document once', async () => {
    const expected = Array.from({ length: 7 }, (_, group) => Math.ceil((DOCS - group) / 7));
    const answers = await Promise.all([0, 1, 2, 3, 4, 5, 6].flatMap((group) => [count(nodeA, group), count(nodeB, group)]));
    assert.deepEqual(answers, expected.flatMap((value) => [value, value]));
  });

  test('a write through one node shows in the next query on the other', async () => {
    const before = await count(nodeB, 3);
    await nodeA.admin('/shared/extra', { method: 'PUT', body: { n: 1e6, group: 3 } });
    const moved = await nodeA.admin('/shared/d3');
    await nodeA.admin('/shared/d3', { method: 'PUT', body: { _rev: moved.body._rev, n: 3, group: 4 } });
    assert.equal(await count(nodeB, 3), before, 'one added, one moved away');
    const res = await nodeB.admin('/shared/_find', { method: 'POST', body: { selector: { group: 4, n: 3 } } });
    assert.deepEqual(res.body.docs.map((doc: { _id: string }) => doc._id), ['d3']);
  });
});
