// Mango in a partitioned database: partitioned and global json indexes, each query kind using its own (mango_idx).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

describeOnEachBackend('Mango in a partitioned database', (server) => {
  const admin = (path: string, options: Parameters<ReturnType<typeof server>['admin']>[1] = {}) => server().admin(path, options);
  const post = (path: string, body: unknown) => admin(path, { method: 'POST', body });
  before(async () => {
    assert.equal((await admin('/pmango?partitioned=true', { method: 'PUT' })).status, 201);
    assert.equal((await admin('/pplain', { method: 'PUT' })).status, 201);
    const docs = [];
    for (const p of ['x', 'y', 'z']) for (let n = 0; n < 5; n++) docs.push({ _id: `${p}:${n}`, n, kind: n % 2 === 0 ? 'even' : 'odd' });
    assert.equal((await post('/pmango/_bulk_docs', { docs })).status, 201);
  });
  const ids = (res: { body: { docs: { _id: string }[] } }) => res.body.docs.map((doc) => doc._id);

  test('POST _index: partitioned by default in a partitioned database, global on request, shown in _index', async () => {
    const byN = await post('/pmango/_index', { index: { fields: ['n'] }, ddoc: 'by-n', name: 'by-n' });
    assert.deepEqual([byN.status, byN.body.result], [200, 'created']);
    assert.equal((await admin('/pmango/_design/by-n')).body.options, undefined, 'the database default is left implicit');
    assert.equal((await post('/pmango/_index', { index: { fields: ['n'] }, ddoc: 'global-n', name: 'global-n', partitioned: false })).status, 200);
    assert.deepEqual((await admin('/pmango/_design/global-n')).body.options, { partitioned: false });
    const listed = (await admin('/pmango/_index')).body.indexes.map((index: { name: string; partitioned?: boolean }) => [index.name, index.partitioned]);
    assert.deepEqual(listed, [['_all_docs', undefined], ['by-n', true], ['global-n', false]]);
    const mismatch = await post('/pmango/_index', { index: { fields: ['kind'] }, ddoc: 'by-n', name: 'by-kind', partitioned: false });
    assert.deepEqual([mismatch.status, mismatch.body], [400, { error: 'invalid_partitioned_option', reason: 'Requested partitioned option does not match existing value on design document _design/by-n' }]);
    const notBoolean = await post('/pmango/_index', { index: { fields: ['kind'] }, partitioned: 'yes' });
    assert.deepEqual([notBoolean.status, notBoolean.body.error], [400, 'invalid_boolean']);
    const plain = await post('/pplain/_index', { index: { fields: ['n'] }, partitioned: true });
    assert.deepEqual([plain.status, plain.body], [400, { error: 'invalid_design_doc', reason: 'partitioned option cannot be true in a non-partitioned database.' }]);
  });

  test('a partition query uses the partitioned index, a key range within the partition', async () => {
    const res = await post('/pmango/_partition/y/_find', { selector: { n: { $gte: 1, $lt: 4 } }, execution_stats: true });
    assert.deepEqual(ids(res), ['y:1', 'y:2', 'y:3']);
    assert.equal(res.body.execution_stats.total_docs_examined, 3, 'only the rows of the range in the partition');
    const explained = await post('/pmango/_partition/y/_explain', { selector: { n: { $gte: 1 } } });
    assert.deepEqual([explained.body.index.name, explained.body.index.partitioned], ['by-n', true]);
    const sorted = await post('/pmango/_find', { selector: { n: { $gt: 0 } }, sort: [{ n: 'desc' }], partition: 'z', limit: 2 });
    assert.deepEqual(ids(sorted), ['z:4', 'z:3']);
    const paged = await post('/pmango/_partition/x/_find', { selector: { n: { $gte: 0 } }, limit: 2 });
    const next = await post('/pmango/_partition/x/_find', { selector: { n: { $gte: 0 } }, limit: 2, bookmark: paged.body.bookmark });
    assert.deepEqual([ids(paged), ids(next)], [['x:0', 'x:1'], ['x:2', 'x:3']]);
  });

  test('a global query uses only global indexes', async () => {
    const res = await post('/pmango/_find', { selector: { n: { $gte: 3 } }, execution_stats: true });
    assert.deepEqual(ids(res).sort(), ['x:3', 'x:4', 'y:3', 'y:4', 'z:3', 'z:4']);
    const explained = await post('/pmango/_explain', { selector: { n: { $gte: 3 } } });
    assert.deepEqual([explained.body.index.name, explained.body.partitioned], ['global-n', true]);
  });

  test('a sort no index of the query kind serves names the kind', async () => {
    const partition = await post('/pmango/_partition/x/_find', { selector: { kind: 'odd' }, sort: ['kind'] });
    assert.deepEqual([partition.status, partition.body], [400, { error: 'no_usable_index', reason: 'No partitioned index exists for this sort, try indexing by the sort fields.' }]);
    const global = await post('/pmango/_find', { selector: { kind: 'odd' }, sort: ['kind'] });
    assert.deepEqual([global.status, global.body], [400, { error: 'no_usable_index', reason: 'No global index exists for this sort, try indexing by the sort fields.' }]);
    const plain = await post('/pplain/_find', { selector: { kind: 'odd' }, sort: ['kind'] });
    assert.equal(plain.body.reason, 'No index exists for this sort, try indexing by the sort fields.');
  });

  test('writes and deletions move a partitioned index row within its partition', async () => {
    const doc = (await admin('/pmango/y:0')).body;
    await admin('/pmango/y:0', { method: 'PUT', body: { ...doc, n: 50 } });
    await admin('/pmango/w:9', { method: 'PUT', body: { n: 2 } });
    assert.deepEqual(ids(await post('/pmango/_partition/y/_find', { selector: { n: { $gt: 3 } } })), ['y:4', 'y:0']);
    assert.deepEqual(ids(await post('/pmango/_partition/w/_find', { selector: { n: { $gt: 0 } } })), ['w:9']);
    const current = (await admin('/pmango/y:4')).body;
    await admin(`/pmango/y:4?rev=${current._rev}`, { method: 'DELETE' });
    assert.deepEqual(ids(await post('/pmango/_partition/y/_find', { selector: { n: { $gt: 3 } } })), ['y:0']);
  });
});
