import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';
import { ACCESS_DB, ADMINS_ONLY, as, seedAccessDb } from '../support/access-helpers.js';
import { FAST_INI, NO_LOCKOUT_INI } from '../support/users-helpers.js';

/** Where `_nouveau` searches: the features list, partitions, per-document access databases, cleanup. */
const INDEX = 'function (doc) { if (doc.title) index("text", "title", doc.title, {store: true}); }';

describeOnEachBackend('Nouveau search scopes', (server) => {
  before(async () => {
    await seedAccessDb(server());
    assert.equal((await server().admin('/parts?partitioned=true', { method: 'PUT' })).status, 201);
    const docs = [{ _id: 'red:1', title: 'apple pie' }, { _id: 'red:2', title: 'cherry' }, { _id: 'blue:1', title: 'apple juice' }];
    assert.equal((await server().admin('/parts/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    assert.equal((await server().admin('/parts/_design/s', { method: 'PUT', body: { nouveau: { t: { index: INDEX } } } })).status, 201);
    const ddoc = await server().admin(`/${ACCESS_DB}/_design/s`, { method: 'PUT', body: { nouveau: { t: { index: INDEX } } } });
    assert.equal(ddoc.status, 201, ddoc.text);
    assert.equal((await as(server(), 'alice', '/a1', { method: 'PUT', body: { _access: ['alice'], title: 'secret apple' } })).status, 201);
  });

  test('GET / lists nouveau among the features', async () => {
    assert.ok((await server().request('/')).body.features.includes('nouveau'));
  });

  test('a search below /{db}/_partition/{p}/ finds that partition\'s documents only', async () => {
    const red = await server().admin('/parts/_partition/red/_design/s/_nouveau/t?q=title:apple');
    assert.equal(red.status, 200, red.text);
    assert.deepEqual(red.body.hits.map((hit: { id: string }) => hit.id), ['red:1']);
    const byParameter = await server().admin('/parts/_design/s/_nouveau/t?q=title:apple&partition=blue');
    assert.deepEqual(byParameter.body.hits.map((hit: { id: string }) => hit.id), ['blue:1']);
  });

  test('a partitioned index refuses a global query, and a global index of a partitioned database a partition\'s (400, as CouchDB\'s search)', async () => {
    const global = await server().admin('/parts/_design/s/_nouveau/t?q=title:apple');
    assert.deepEqual([global.status, global.body], [400, { error: 'bad_request', reason: '`partition` parameter is mandatory for queries to this index.' }]);
    const posted = await server().admin('/parts/_design/s/_nouveau/t', { method: 'POST', body: { q: 'title:apple' } });
    assert.equal(posted.status, 400);
    const ddoc = { options: { partitioned: false }, nouveau: { t: { index: INDEX } } };
    assert.equal((await server().admin('/parts/_design/g', { method: 'PUT', body: ddoc })).status, 201);
    const all = await server().admin('/parts/_design/g/_nouveau/t?q=title:apple&sort="_id"');
    assert.deepEqual(all.body.hits.map((hit: { id: string }) => hit.id), ['blue:1', 'red:1']);
    const inPartition = await server().admin('/parts/_partition/red/_design/g/_nouveau/t?q=title:apple');
    assert.deepEqual([inPartition.status, inPartition.body], [400, { error: 'bad_request', reason: '`partition` not supported on this index' }]);
  });

  test('in a database with per-document access, search is for database admins: members get 403', async () => {
    const member = await as(server(), 'alice', '/_design/s/_nouveau/t?q=title:apple');
    assert.deepEqual([member.status, member.body], [403, ADMINS_ONLY]);
    const info = await as(server(), 'alice', '/_design/s/_nouveau_info/t');
    assert.equal(info.status, 403);
    const admin = await server().admin(`/${ACCESS_DB}/_design/s/_nouveau/t?q=title:apple`);
    assert.deepEqual(admin.body.hits.map((hit: { id: string; fields: object }) => [hit.id, hit.fields]), [['a1', { title: 'secret apple' }]]);
  });

  test('_nouveau_cleanup drops the indexes no design document defines any more', async () => {
    await server().admin('/parts/_partition/red/_design/s/_nouveau/t?q=*:*');
    const before = await server().admin('/parts/_design/s/_nouveau_info/t');
    assert.equal(before.body.search_index.num_docs, 3);
    const ddoc = await server().admin('/parts/_design/s');
    const edited = { ...ddoc.body, nouveau: { t: { index: INDEX.replace('title", doc.title', 'title", doc.title + " x"') } } };
    assert.equal((await server().admin('/parts/_design/s', { method: 'PUT', body: edited })).status, 201);
    const cleaned = await server().admin('/parts/_nouveau_cleanup', { method: 'POST', body: {} });
    assert.deepEqual([cleaned.status, cleaned.body], [202, { ok: true }]);
    // The old definition again: its index was dropped, so it starts empty.
    const current = await server().admin('/parts/_design/s');
    assert.equal((await server().admin('/parts/_design/s', { method: 'PUT', body: { ...current.body, nouveau: ddoc.body.nouveau } })).status, 201);
    assert.equal((await server().admin('/parts/_partition/red/_design/s/_nouveau/t?q=*:*&update=false')).body.total_hits, 0);
    assert.equal((await server().admin('/parts/_partition/red/_design/s/_nouveau/t?q=*:*')).body.total_hits, 2);
  });

  test('conflicted documents are indexed by their winning revision; purging a winner indexes the next one (CouchDB\'s "purge with conflicts")', async () => {
    assert.equal((await server().admin('/conflicts', { method: 'PUT' })).status, 201);
    const docs = [
      { _id: 'doc4', foo: 'foo', bar: 42, _revisions: { start: 1, ids: ['a'] } },
      { _id: 'doc4', foo: 'fooX', bar: 43, _revisions: { start: 1, ids: ['b'] } },
      { _id: 'doc3', foo: 'bar', bar: 12, _revisions: { start: 1, ids: ['a'] }, _deleted: true },
      { _id: 'doc3', foo: 'barX', bar: 13, _revisions: { start: 2, ids: ['c', 'b'] } },
      { _id: 'doc1', foo: 'baz', bar: 0, _revisions: { start: 1, ids: ['a'] } },
      { _id: 'doc1', foo: 'bazX', bar: 1, _revisions: { start: 2, ids: ['c', 'b'] }, _deleted: true },
      { _id: 'doc2', foo: 'foobar', bar: 100, _revisions: { start: 2, ids: ['b', 'a'] }, _deleted: true },
    ];
    assert.equal((await server().admin('/conflicts/_bulk_docs', { method: 'POST', body: { docs, new_edits: false } })).status, 201);
    const index = 'function (doc) { index("string", "foo", doc.foo, {store: true}); index("double", "bar", doc.bar, {store: true}); }';
    assert.equal((await server().admin('/conflicts/_design/s', { method: 'PUT', body: { nouveau: { t: { index } } } })).status, 201);
    const hits = async () => (await server().admin('/conflicts/_design/s/_nouveau/t?q=*:*&include_docs=true')).body.hits.map((hit: { id: string; doc: { _rev: string }; fields: object }) => [hit.id, hit.doc._rev, hit.fields]);
    assert.deepEqual(await hits(), [['doc1', '1-a', { foo: 'baz', bar: 0 }], ['doc3', '2-c', { foo: 'barX', bar: 13 }], ['doc4', '1-b', { foo: 'fooX', bar: 43 }]]);
    const purge = await server().admin('/conflicts/_purge', { method: 'POST', body: { doc1: ['2-c'], doc2: ['2-b'], doc3: ['2-c'], doc4: ['1-b'] } });
    assert.equal(purge.status, 201);
    assert.deepEqual(await hits(), [['doc1', '1-a', { foo: 'baz', bar: 0 }], ['doc4', '1-a', { foo: 'foo', bar: 42 }]]);
  });

  test('_nouveau_cleanup is for database admins', async () => {
    const member = await as(server(), 'alice', '/_nouveau_cleanup', { method: 'POST', body: {} });
    assert.equal(member.status, 403);
  });
}, FAST_INI + NO_LOCKOUT_INI);
