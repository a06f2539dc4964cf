import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

/** `GET/POST /{db}/_design_docs` and `GET /{db}/_design/{name}/_info`. */
describe('design document listings and info', () => {
  let server: TestServer;
  const views = { by_type: { map: 'function (doc) { emit(doc.type, 1); }', reduce: '_count' } };

  before(async () => {
    server = await startServer();
    await server.admin('/dd', { method: 'PUT' });
    for (const id of ['a', '_design/alpha', 'b', '_design/beta', '_design/gamma', 'z', '_local/x']) {
      assert.equal((await server.admin(`/dd/${id}`, { method: 'PUT', body: id === '_design/alpha' ? { views } : { v: 1 } })).status, 201);
    }
  });
  after(async () => server.close());

  const ids = (body: { rows: { id?: string; key: string }[] }): string[] => body.rows.map((row) => row.key);

  test('_design_docs lists only design documents, with _all_docs options', async () => {
    assert.deepEqual(ids((await server.admin('/dd/_design_docs')).body), ['_design/alpha', '_design/beta', '_design/gamma']);
    assert.deepEqual(ids((await server.admin('/dd/_design_docs?descending=true&limit=2')).body), ['_design/gamma', '_design/beta']);
    assert.deepEqual(ids((await server.admin('/dd/_design_docs?startkey="_design/b"')).body), ['_design/beta', '_design/gamma']);
    assert.deepEqual(ids((await server.admin('/dd/_design_docs?endkey="_design/beta"&inclusive_end=false')).body), ['_design/alpha']);
    const withDocs = await server.admin('/dd/_design_docs?include_docs=true&limit=1');
    assert.deepEqual(withDocs.body.rows[0].doc.views, views);
  });

  test('POST _design_docs with keys answers each key; non-design ids are not found', async () => {
    const res = await server.admin('/dd/_design_docs', { method: 'POST', body: { keys: ['_design/beta', 'a', '_design/none'] } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.rows.map((row: { key: string; error?: string }) => [row.key, row.error ?? 'ok']), [['_design/beta', 'ok'], ['a', 'not_found'], ['_design/none', 'not_found']]);
  });

  test('_info answers CouchDB\'s shape with a signature that follows the views only', async () => {
    const info = await server.admin('/dd/_design/alpha/_info');
    assert.equal(info.status, 200);
    assert.equal(info.body.name, 'alpha');
    const index = info.body.view_index;
    assert.deepEqual(Object.keys(index).sort(), ['collator_versions', 'compact_running', 'language', 'purge_seq', 'signature', 'sizes', 'update_seq', 'updater_running', 'updates_pending', 'waiting_clients', 'waiting_commit']);
    assert.match(index.signature, /^[0-9a-f]{32}$/);
    assert.equal(index.language, 'javascript');
    const stored = await server.admin('/dd/_design/alpha');
    await server.admin('/dd/_design/alpha', { method: 'PUT', body: { ...stored.body, other: 1 } });
    assert.equal((await server.admin('/dd/_design/alpha/_info')).body.view_index.signature, index.signature, 'an unrelated edit keeps it');
    const edited = await server.admin('/dd/_design/alpha');
    await server.admin('/dd/_design/alpha', { method: 'PUT', body: { ...edited.body, views: { other: { map: 'function (doc) {}' } } } });
    assert.notEqual((await server.admin('/dd/_design/alpha/_info')).body.view_index.signature, index.signature);
    const missing = await server.admin('/dd/_design/none/_info');
    assert.deepEqual([missing.status, missing.body.error], [404, 'not_found']);
  });
});
