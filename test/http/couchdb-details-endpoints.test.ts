import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

/** Endpoints answered as a one-node CouchDB 3.5.0 answers them (each checked side by side against one). */
describe('CouchDB details: shards, Clouseau search, Mango explain and error texts', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/details', { method: 'PUT' });
    await server.admin('/details/_design/d', { method: 'PUT', body: { views: { v: { map: 'function (doc) { emit(doc.a, 1); }', reduce: '_count' } }, indexes: { idx: { index: 'function (doc) { index("a", doc.a); }' } } } });
    await server.admin('/details/_index', { method: 'POST', body: { index: { fields: ['a'] }, name: 'ia', ddoc: 'dd' } });
  });
  after(async () => server.close());

  test('GET /{db}/_shards lists one shard holding the whole range on this node; _shards/{docid} names it', async () => {
    const node = (await server.admin('/_membership')).body.cluster_nodes as string[];
    const all = await server.admin('/details/_shards');
    assert.deepEqual([all.status, all.body], [200, { shards: { '00000000-ffffffff': node } }]);
    const one = await server.admin('/details/_shards/some-doc');
    assert.deepEqual([one.status, one.body], [200, { range: '00000000-ffffffff', nodes: node }]);
    assert.equal((await server.admin('/details/_shards', { method: 'POST', body: {} })).status, 405);
    assert.equal((await server.admin('/missing-db/_shards')).status, 404);
    assert.equal((await server.request('/details/_shards')).status, 401, 'members only, as any read of the database');
  });

  test('POST /{db}/_sync_shards is accepted (202) for server admins only', async () => {
    const synced = await server.admin('/details/_sync_shards', { method: 'POST' });
    assert.deepEqual([synced.status, synced.body], [202, { ok: true }]);
    assert.equal((await server.request('/details/_sync_shards', { method: 'POST' })).status, 401);
    assert.equal((await server.admin('/details/_sync_shards')).status, 405);
  });

  test('the Clouseau search API answers 503 "Search is not available" after the design document and index checks', async () => {
    const search = await server.admin('/details/_design/d/_search/idx?q=a');
    assert.deepEqual([search.status, search.body], [503, { error: 'service unavailable', reason: 'Search is not available' }]);
    const info = await server.admin('/details/_design/d/_search_info/idx');
    assert.equal(info.status, 503);
    const missingIndex = await server.admin('/details/_design/d/_search_info/nope');
    assert.deepEqual([missingIndex.status, missingIndex.body], [404, { error: 'not_found', reason: 'missing' }]);
    const missingDdoc = await server.admin('/details/_design/nope/_search/idx?q=a');
    assert.deepEqual([missingDdoc.status, missingDdoc.body.error], [404, 'not_found']);
    const analyze = await server.admin('/_search_analyze', { method: 'POST', body: { analyzer: 'standard', text: 'a' } });
    assert.equal(analyze.status, 503);
  });

  test('POST _index of a text index is 503 "required index service unavailable"; an unknown type is named bare', async () => {
    const res = await server.admin('/details/_index', { method: 'POST', body: { index: { fields: ['a'] }, type: 'text' } });
    assert.deepEqual([res.status, res.body], [503, { error: 'required index service unavailable', reason: 'text' }]);
    const unknown = await server.admin('/details/_index', { method: 'POST', body: { index: { fields: ['a'] }, type: 'foo' } });
    assert.deepEqual([unknown.status, unknown.body], [400, { error: 'invalid_index', reason: 'Invalid type for index: foo' }]);
  });

  test('_explain shows CouchDB 3.5 members: fields [], update true, selector_hints, and _all_docs keys as ids', async () => {
    const special = await server.admin('/details/_explain', { method: 'POST', body: { selector: { _id: { $gt: 'x' } }, sort: ['_id'] } });
    assert.equal(special.body.index.name, '_all_docs');
    assert.deepEqual(special.body.fields, []);
    assert.deepEqual([special.body.mrargs.start_key, special.body.mrargs.end_key, special.body.mrargs.update], ['x', '<MAX>', true]);
    assert.deepEqual(special.body.selector_hints, [
      { type: 'json', indexable_fields: ['_id'], unindexable_fields: [] },
      { type: 'nouveau', indexable_fields: ['_id'], unindexable_fields: [] },
    ]);
    const unindexed = await server.admin('/details/_explain', { method: 'POST', body: { selector: { b: 1 } } });
    assert.deepEqual([unindexed.body.mrargs.start_key, unindexed.body.mrargs.end_key], [null, '<MAX>']);
    const candidate = unindexed.body.index_candidates[0];
    assert.deepEqual([candidate.index.name, candidate.analysis.usable, candidate.analysis.reasons, candidate.analysis.covering], ['ia', false, [{ name: 'field_mismatch' }], false]);
    const json = await server.admin('/details/_explain', { method: 'POST', body: { selector: { a: { $gt: 1 }, c: { $ne: 2 } }, fields: ['a'] } });
    assert.equal(json.body.index.name, 'ia');
    assert.deepEqual([json.body.mrargs.start_key, json.body.fields], [[1], ['a']]);
    // A nouveau index could search `c` too: `$ne` becomes "c exists and is not 2".
    assert.deepEqual(json.body.selector_hints, [
      { type: 'json', indexable_fields: ['a'], unindexable_fields: ['c'] },
      { type: 'nouveau', indexable_fields: ['a', 'c'], unindexable_fields: [] },
    ]);
  });

  test('error texts: _uuids count, _scheduler paths, a _selector feed without a selector, POST _view keys', async () => {
    for (const count of ['x', '-1', '1.5']) {
      const res = await server.admin(`/_uuids?count=${count}`);
      assert.deepEqual([res.status, res.body], [400, { error: 'bad_request', reason: 'count must be a positive integer' }], count);
    }
    assert.deepEqual((await server.admin('/_uuids?count=0')).body, { uuids: [] });
    assert.deepEqual((await server.admin('/_scheduler/jobs/nope')).body, { error: 'not_found', reason: 'missing' });
    assert.deepEqual((await server.admin('/_scheduler/docs/_replicator/nope')).body, { error: 'not_found', reason: 'missing' });
    const otherDb = await server.admin('/_scheduler/docs/nope');
    assert.deepEqual([otherDb.status, otherDb.body], [400, { error: 'bad_request', reason: 'Invalid path' }]);
    const unknownKind = await server.admin('/_scheduler/other');
    assert.deepEqual([unknownKind.status, unknownKind.body], [404, { error: 'not found' }]);
    const noSelector = await server.admin('/details/_changes?filter=_selector', { method: 'POST', body: {} });
    assert.deepEqual([noSelector.status, noSelector.body.reason], [400, 'Selector error: expected a JSON object']);
    const getSelector = await server.admin('/details/_changes?filter=_selector');
    assert.deepEqual([getSelector.status, getSelector.body.reason], [400, 'Selector must be specified in POST payload']);
    const keys = await server.admin('/details/_design/d/_view/v', { method: 'POST', body: { keys: 'x' } });
    assert.deepEqual([keys.status, keys.body], [400, { error: 'bad_request', reason: '`keys` member must be an array.' }]);
  });
});
