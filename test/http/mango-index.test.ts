/**
 * `_index` over HTTP: the design documents CouchDB would write, listing, `exists`, deleting one
 * index or several, partial indexes, errors, and who may do what; on every backend.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { createIndex, find, findIds, mangoServer, PEOPLE, seed, SERVER_BACKENDS } from '../support/mango.js';

const ALL_DOCS = { ddoc: null, name: '_all_docs', type: 'special', def: { fields: [{ _id: 'asc' }] } };

for (const backend of SERVER_BACKENDS) {
  describe(`${backend}: _index`, () => {
    const server = mangoServer(backend);
    before(async () => {
      await seed(server(), 'idx', PEOPLE);
    });

    test('creating an index writes the design document CouchDB writes, then says exists', async () => {
      const created = await createIndex(server(), 'idx', { index: { fields: ['city', { age: 'asc' }] }, ddoc: 'town', name: 'town-age' });
      assert.deepEqual(created, { result: 'created', id: '_design/town', name: 'town-age' });
      const ddoc = await server().admin('/idx/_design/town');
      assert.deepEqual(ddoc.body.views, {
        'town-age': { map: { fields: { city: 'asc', age: 'asc' }, partial_filter_selector: {} }, reduce: '_count', options: { def: { fields: ['city', { age: 'asc' }] } } },
      });
      assert.equal(ddoc.body.language, 'query');
      const again = await createIndex(server(), 'idx', { index: { fields: ['city', { age: 'asc' }] }, ddoc: '_design/town', name: 'town-age' });
      assert.equal(again.result, 'exists');
      assert.equal((await server().admin('/idx/_design/town')).body._rev, ddoc.body._rev);
    });

    test('a generated name and design document are the same hash, stable for the same definition', async () => {
      const first = await createIndex(server(), 'idx', { index: { fields: ['score'] } });
      assert.match(first.name, /^[0-9a-f]{40}$/);
      assert.equal(first.id, `_design/${first.name}`);
      assert.deepEqual(await createIndex(server(), 'idx', { index: { fields: ['score'] } }), { ...first, result: 'exists' });
    });

    test('GET _index lists _all_docs first, then by design document; limit and skip', async () => {
      await createIndex(server(), 'idx', { index: { fields: ['name'] }, ddoc: 'a-names', name: 'n' });
      const res = await server().admin('/idx/_index');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.indexes[0], ALL_DOCS);
      const ddocs = res.body.indexes.slice(1).map((index: { ddoc: string }) => index.ddoc);
      assert.deepEqual(ddocs, [...ddocs].sort());
      assert.ok(ddocs.includes('_design/a-names'));
      assert.equal(res.body.total_rows, res.body.indexes.length);
      const page = await server().admin('/idx/_index?limit=1&skip=1');
      assert.deepEqual([page.body.total_rows, page.body.indexes.length, page.body.indexes[0].ddoc], [res.body.total_rows, 1, res.body.indexes[1].ddoc]);
      const bad = await server().admin('/idx/_index?limit=0');
      assert.deepEqual([bad.status, bad.body.error], [500, 'invalid_list_index_params']);
    });

    test('a partial index holds only matching documents and is used only when named', async () => {
      await createIndex(server(), 'idx', { index: { fields: ['age'], partial_filter_selector: { city: 'Paris' } }, ddoc: 'paris', name: 'paris-age' });
      const listed = (await server().admin('/idx/_index')).body.indexes.find((index: { name: string }) => index.name === 'paris-age');
      assert.deepEqual(listed.def, { fields: [{ age: 'asc' }], partial_filter_selector: { city: { $eq: 'Paris' } } });
      const unnamed = await find(server(), 'idx', { selector: { age: { $gt: 0 } } });
      assert.equal(unnamed.body.warning, 'No matching index found, create an index to optimize query time.');
      const named = await find(server(), 'idx', { selector: { age: { $gt: 0 } }, use_index: 'paris', execution_stats: true });
      assert.equal(named.body.warning, undefined);
      assert.deepEqual(named.body.docs.map((doc: { _id: string }) => doc._id), ['alice', 'carol']);
      assert.equal(named.body.execution_stats.total_keys_examined, 2);
    });

    test('DELETE one index: its design document goes when it was the last; 404 when unknown', async () => {
      await createIndex(server(), 'idx', { index: { fields: ['manager'] }, ddoc: 'two', name: 'one' });
      await createIndex(server(), 'idx', { index: { fields: ['tags'] }, ddoc: 'two', name: 'other' });
      assert.deepEqual((await server().admin('/idx/_index/two/json/one', { method: 'DELETE' })).body, { ok: true });
      assert.deepEqual(Object.keys((await server().admin('/idx/_design/two')).body.views), ['other']);
      assert.deepEqual((await server().admin('/idx/_index/_design/two/json/other', { method: 'DELETE' })).body, { ok: true });
      assert.equal((await server().admin('/idx/_design/two')).status, 404);
      const missing = await server().admin('/idx/_index/two/json/other', { method: 'DELETE' });
      assert.deepEqual([missing.status, missing.body], [404, { error: 'not_found', reason: 'missing' }]);
      assert.equal((await server().admin('/idx/_index/two/json/other')).status, 405);
    });

    test('a dropped index and one created again with the same definition give the same answers', async () => {
      await createIndex(server(), 'idx', { index: { fields: ['name'] }, ddoc: 'again', name: 'n' });
      assert.deepEqual(await findIds(server(), 'idx', { selector: { name: { $gt: 'C' } }, use_index: 'again' }), ['carol', 'dave', 'erin']);
      await server().admin('/idx/_index/again/json/n', { method: 'DELETE' });
      await createIndex(server(), 'idx', { index: { fields: ['name'] }, ddoc: 'again', name: 'n' });
      assert.deepEqual(await findIds(server(), 'idx', { selector: { name: { $gt: 'C' } }, use_index: 'again' }), ['carol', 'dave', 'erin']);
    });

    test('_bulk_delete removes the indexes of each named design document', async () => {
      await createIndex(server(), 'idx', { index: { fields: ['a'] }, ddoc: 'bulk-a' });
      await createIndex(server(), 'idx', { index: { fields: ['b'] }, ddoc: 'bulk-b' });
      const res = await server().admin('/idx/_index/_bulk_delete', { method: 'POST', body: { docids: ['bulk-a', '_design/bulk-b', 'nothing'] } });
      assert.deepEqual(res.body, { success: [{ id: '_design/bulk-a', ok: true }, { id: '_design/bulk-b', ok: true }], fail: [{ id: '_design/nothing', error: 'not_found' }] });
      const bad = await server().admin('/idx/_index/_bulk_delete', { method: 'POST', body: { docids: [null] } });
      assert.deepEqual([bad.status, bad.body.error], [400, 'invalid_bulk_docs']);
    });

    test('malformed index definitions are 400s with CouchDB error names', async () => {
      const cases: [object, string][] = [
        [{}, 'missing_required_key'],
        [{ index: 'x' }, 'invalid_index'],
        [{ index: {} }, 'missing_required_key'],
        [{ index: { fields: 'x' } }, 'invalid_sort_json'],
        [{ index: { fields: [{ a: 'up' }] } }, 'invalid_sort_dir'],
        [{ index: { fields: ['a'] }, type: 'geo' }, 'invalid_index'],
        [{ index: { fields: ['a'] }, name: '' }, 'invalid_empty_string'],
        [{ index: { fields: ['a'] }, ddoc: 7 }, 'invalid_index_name'],
        [{ index: { fields: ['a'] }, nope: true }, 'invalid_key'],
        [{ index: { fields: ['a'], partial_filter_selector: { a: { $bad: 1 } } } }, 'invalid_operator'],
      ];
      for (const [body, error] of cases) {
        const res = await server().admin('/idx/_index', { method: 'POST', body });
        assert.deepEqual([res.status, res.body.error], [400, error], JSON.stringify(body));
      }
      await server().admin('/idx/_design/js', { method: 'PUT', body: { language: 'javascript', views: {} } });
      const js = await server().admin('/idx/_index', { method: 'POST', body: { index: { fields: ['a'] }, ddoc: 'js' } });
      assert.deepEqual([js.status, js.body.error], [400, 'invalid_ddoc_lang']);
    });

    test('members query and list indexes; only database admins create or delete them; others get nothing', async () => {
      await server().admin('/_users/org.couchdb.user:member', { method: 'PUT', body: { name: 'member', password: 'pw', roles: [], type: 'user' } });
      await server().admin('/_users/org.couchdb.user:stranger', { method: 'PUT', body: { name: 'stranger', password: 'pw', roles: [], type: 'user' } });
      await server().admin('/idx/_security', { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: ['member'], roles: [] } } });
      const member: [string, string] = ['member', 'pw'];
      assert.equal((await server().request('/idx/_find', { method: 'POST', auth: member, body: { selector: { city: 'Rome' } } })).status, 200);
      assert.equal((await server().request('/idx/_explain', { method: 'POST', auth: member, body: { selector: {} } })).status, 200);
      assert.equal((await server().request('/idx/_index', { auth: member })).status, 200);
      const create = await server().request('/idx/_index', { method: 'POST', auth: member, body: { index: { fields: ['x'] } } });
      assert.deepEqual([create.status, create.body.error], [401, 'unauthorized']);
      const remove = await server().request('/idx/_index/town/json/town-age', { method: 'DELETE', auth: member });
      assert.deepEqual([remove.status, remove.body.error], [401, 'unauthorized']);
      const stranger = await server().request('/idx/_find', { method: 'POST', auth: ['stranger', 'pw'], body: { selector: {} } });
      assert.deepEqual([stranger.status, stranger.body.error], [403, 'forbidden']);
      assert.equal((await server().request('/idx/_find', { method: 'POST', body: { selector: {} } })).status, 401);
      assert.equal((await server().request('/nodb/_find', { method: 'POST', auth: member, body: { selector: {} } })).status, 404);
    });
  });
}
