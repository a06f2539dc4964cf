// Views of a partitioned database: partitioned by default, each partition one key range of the index (couch_mrview).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

describeOnEachBackend('views of a partitioned database', (server) => {
  const admin = (path: string, options: Parameters<ReturnType<typeof server>['admin']>[1] = {}) => server().admin(path, options);
  const map = 'function (doc) { if (doc.n !== undefined) { emit(doc.n, doc.n); emit([doc.g, doc.n], 1); } }';
  before(async () => {
    assert.equal((await admin('/pviews?partitioned=true', { method: 'PUT' })).status, 201);
    const docs = [];
    // Partitions whose names sort around each other's and are ICU-equal ("c" and "c\u200B") stay apart.
    for (const p of ['b', 'c', 'c\u200B', 'ca']) for (let n = 0; n < 4; n++) docs.push({ _id: `${p}:d${n}`, n: p === 'b' ? n : n + 10, g: n % 2 === 0 ? 'even' : 'odd' });
    assert.equal((await admin('/pviews/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    const views = { all: { map }, count: { map, reduce: '_count' }, sum: { map, reduce: '_sum' }, js: { map, reduce: 'function (k, v, re) { return v.length; }' } };
    assert.equal((await admin('/pviews/_design/p', { method: 'PUT', body: { views } })).status, 201);
    assert.equal((await admin('/pviews/_design/g', { method: 'PUT', body: { options: { partitioned: false }, views } })).status, 201);
  });
  const rows = async (path: string) => {
    const res = await admin(path);
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    return res.body.rows;
  };
  const ids = async (path: string) => (await rows(path)).map((row: { id: string; key: unknown }) => `${row.id} ${JSON.stringify(row.key)}`);

  test('a partition query reads that partition only, in key order', async () => {
    const numbers = await ids('/pviews/_partition/c/_design/p/_view/all?end_key=100');
    assert.deepEqual(numbers, ['c:d0 10', 'c:d1 11', 'c:d2 12', 'c:d3 13']);
    assert.deepEqual(await ids('/pviews/_partition/c%E2%80%8B/_design/p/_view/all?limit=1'), ['c\u200B:d0 10']);
    assert.deepEqual(await ids('/pviews/_design/p/_view/all?partition=b&start_key=1&end_key=2'), ['b:d1 1', 'b:d2 2']);
    assert.deepEqual(await ids('/pviews/_partition/b/_design/p/_view/all?descending=true&end_key=2'), ['b:d3 ["odd",3]', 'b:d1 ["odd",1]', 'b:d2 ["even",2]', 'b:d0 ["even",0]', 'b:d3 3', 'b:d2 2']);
    assert.deepEqual(await ids('/pviews/_partition/b/_design/p/_view/all?start_key=2&end_key=3&inclusive_end=false'), ['b:d2 2']);
    assert.deepEqual(await ids('/pviews/_partition/b/_design/p/_view/all?skip=6&limit=5'), ['b:d1 ["odd",1]', 'b:d3 ["odd",3]']);
    assert.deepEqual(await ids('/pviews/_partition/b/_design/p/_view/all?keys=[3,0,10]'), ['b:d3 3', 'b:d0 0']);
    const docs = await rows('/pviews/_partition/ca/_design/p/_view/all?key=12&include_docs=true');
    assert.deepEqual(docs.map((row: { doc: { _id: string } }) => row.doc._id), ['ca:d2']);
    const posted = await admin('/pviews/_partition/b/_design/p/_view/all', { method: 'POST', body: { keys: [1] } });
    assert.deepEqual(posted.body.rows.map((row: { id: string }) => row.id), ['b:d1']);
    assert.deepEqual(await rows('/pviews/_partition/none/_design/p/_view/all'), []);
  });

  test('reduce in a partition: built-ins and JavaScript, grouped and not', async () => {
    assert.deepEqual(await rows('/pviews/_partition/c/_design/p/_view/count'), [{ key: null, value: 8 }]);
    // Whole-partition built-ins are counted by storage over the partition's range: the same answers as from its rows.
    assert.deepEqual(await rows('/pviews/_partition/b/_design/p/_view/sum'), [{ key: null, value: 10 }]);
    assert.deepEqual(await rows('/pviews/_partition/none/_design/p/_view/count'), []);
    assert.deepEqual(await rows('/pviews/_partition/b/_design/p/_view/count?skip=1'), []);
    assert.deepEqual(await rows('/pviews/_partition/c%E2%80%8B/_design/p/_view/count?start_key=11'), [{ key: null, value: 7 }]);
    assert.deepEqual(await rows('/pviews/_partition/b/_design/p/_view/sum?end_key=3'), [{ key: null, value: 6 }]);
    assert.deepEqual(await rows('/pviews/_partition/b/_design/p/_view/count?group_level=1&start_key=["a"]'), [{ key: ['even'], value: 2 }, { key: ['odd'], value: 2 }]);
    assert.deepEqual(await rows('/pviews/_partition/ca/_design/p/_view/sum?group=true&limit=2'), [{ key: 10, value: 10 }, { key: 11, value: 11 }]);
    assert.deepEqual(await rows('/pviews/_partition/c/_design/p/_view/js'), [{ key: null, value: 8 }]);
    assert.deepEqual(await rows('/pviews/_partition/b/_design/p/_view/count?keys=[1,2]&group=true'), [{ key: 1, value: 1 }, { key: 2, value: 1 }]);
  });

  test('the database-wide view answers only global queries, the partitioned one only partition queries', async () => {
    assert.equal((await rows('/pviews/_design/g/_view/all')).length, 32);
    assert.deepEqual(await rows('/pviews/_design/g/_view/count'), [{ key: null, value: 32 }]);
    const global = await admin('/pviews/_design/p/_view/all');
    assert.deepEqual([global.status, global.body.reason], [400, '`partition` parameter is mandatory for queries to this view.']);
    const partition = await admin('/pviews/_partition/b/_design/g/_view/all');
    assert.deepEqual([partition.status, partition.body.reason], [400, '`partition` parameter is not supported in this design doc']);
    const queries = await admin('/pviews/_partition/b/_design/p/_view/count/queries', { method: 'POST', body: { queries: [{}, { group: true, limit: 1 }] } });
    assert.deepEqual(queries.body.results.map((result: { rows: unknown[] }) => result.rows), [[{ key: null, value: 8 }], [{ key: 0, value: 1 }]]);
    assert.equal((await admin('/pviews/_partition/b/_design/p/_info')).status, 404, 'only views under _partition');
    const multi = await admin('/pviews/_design/p/_view/count?partition=b', { method: 'POST', body: { queries: [{}, { group: true, limit: 1 }] } });
    // CouchDB 3.5 answers `queries` only at `…/queries`, partition or not.
    assert.deepEqual([multi.status, multi.body.reason], [400, 'The `queries` parameter is no longer supported at this endpoint']);
  });

  test('an edit moves its rows; a deletion drops them from its partition', async () => {
    const doc = (await admin('/pviews/b:d0')).body;
    await admin('/pviews/b:d0', { method: 'PUT', body: { ...doc, n: 100 } });
    assert.deepEqual(await ids('/pviews/_partition/b/_design/p/_view/all?start_key=3&end_key=1000'), ['b:d3 3', 'b:d0 100']);
    const current = (await admin('/pviews/b:d3')).body;
    await admin(`/pviews/b:d3?rev=${current._rev}`, { method: 'DELETE' });
    assert.deepEqual(await rows('/pviews/_partition/b/_design/p/_view/count'), [{ key: null, value: 6 }]);
    assert.deepEqual(await rows('/pviews/_partition/c/_design/p/_view/count'), [{ key: null, value: 8 }]);
  });
});
