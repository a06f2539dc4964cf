/**
 * Views as an application lives with them: CouchDB's error answers, indexes that follow document
 * writes and survive design-document edits and restarts, cleanup, compaction, members-only reads,
 * a map function that throws on one document, `_info`, `_active_tasks` and `filter=_view`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKEND_SERVERS } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';

const DDOC = {
  views: {
    by_n: { map: 'function (doc) { if (typeof doc.n === "number") emit(doc.n, null); }', reduce: '_count' },
    plain: { map: 'function (doc) { emit(doc._id, null); }' },
    fragile: { map: 'function (doc) { if (doc.bad) throw new Error("boom"); emit(doc._id, 1); }' },
  },
};

for (const backend of BACKEND_SERVERS) {
  describe(`${backend.name}: view lifecycle and errors`, () => {
    let server: TestServer;
    const get = (path: string) => server.admin(`/l/_design/app/_view/${path}`);
    before(async () => {
      server = await backend.start({ keepData: true });
      await server.admin('/l', { method: 'PUT' });
      await server.admin('/l/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'a', n: 1 }, { _id: 'b', n: 2 }, { _id: 'x', bad: true }] } });
      assert.equal((await server.admin('/l/_design/app', { method: 'PUT', body: DDOC })).status, 201);
    });
    after(async () => server.close());

    test('query_parse_error texts and 404s as CouchDB words them', async () => {
      const cases: [string, number, string, string][] = [
        ['plain?reduce=true', 400, 'query_parse_error', 'Reduce is invalid for map-only views.'],
        ['plain?group=true', 400, 'query_parse_error', 'Invalid use of grouping on a map view.'],
        ['by_n?keys=[1,2]', 400, 'query_parse_error', 'Multi-key fetches for reduce views must use `group=true`'],
        ['by_n?include_docs=true', 400, 'query_parse_error', '`include_docs` is invalid for reduce'],
        ['by_n?conflicts=true', 400, 'query_parse_error', '`conflicts` is invalid for reduce views.'],
        ['by_n?group=false&group_level=1', 400, 'query_parse_error', "Can't specify group=false and group_level>0 at the same time"],
        ['plain?keys=[1,2]&startkey=2', 400, 'query_parse_error', '`keys` is incompatible with `key`, `start_key` and `end_key`'],
        ['plain?limit=-1', 400, 'query_parse_error', 'Invalid value for positive integer: "-1"'],
        ['plain?limit=abc', 400, 'query_parse_error', 'Invalid value for integer: "abc"'],
        ['plain?skip=x', 400, 'query_parse_error', 'Invalid value for integer: "x"'],
        ['plain?descending=maybe', 400, 'query_parse_error', 'Invalid boolean parameter: "maybe"'],
        ['plain?update=soon', 400, 'query_parse_error', 'Invalid value for `update`.'],
        ['plain?stale=never', 400, 'query_parse_error', 'Invalid value for `stale`.'],
        ['plain?stable=perhaps', 400, 'query_parse_error', 'Invalid value for `stable`.'],
        ['plain?key=notjson', 400, 'bad_request', 'invalid UTF-8 JSON'],
        ['nothere', 404, 'not_found', 'missing_named_view'],
      ];
      for (const [path, status, error, reason] of cases) {
        const res = await get(path);
        assert.deepEqual([res.status, res.body], [status, { error, reason }], path);
      }
      const missing = await server.admin('/l/_design/none/_view/x');
      assert.deepEqual([missing.status, missing.body], [404, { error: 'not_found', reason: 'missing' }]);
      const both = await server.admin('/l/_design/app/_view/plain', { method: 'POST', body: { keys: [], queries: [] } });
      assert.deepEqual([both.status, both.body.reason], [400, 'The `queries` parameter is no longer supported at this endpoint']);
      const bothMulti = await server.admin('/l/_design/app/_view/plain/queries', { method: 'POST', body: { keys: [], queries: [] } });
      assert.deepEqual([bothMulti.status, bothMulti.body.reason], [400, '`keys` and `queries` are mutually exclusive']);
      assert.equal((await server.admin('/l/_design/app/_view/plain', { method: 'PUT', body: {} })).status, 405);
    });

    test('a map function that throws skips that document only, and says so in the log', async () => {
      const res = await get('fragile');
      assert.deepEqual(res.body.rows.map((row: { id: string }) => row.id), ['_design/app'].filter(() => false).concat(['a', 'b']));
      assert.ok(server.logs.some((line) => line.includes('map function failed') && line.includes('"x"')));
    });

    test('writes, edits and deletions show in the next query; design documents are never mapped', async () => {
      assert.deepEqual((await get('plain')).body.rows.map((row: { id: string }) => row.id), ['a', 'b', 'x']);
      const b = await server.admin('/l/b');
      await server.admin('/l/b', { method: 'PUT', body: { _rev: b.body._rev, n: 20 } });
      const a = await server.admin('/l/a');
      await server.admin(`/l/a?rev=${a.body._rev}`, { method: 'DELETE' });
      await server.admin('/l/c', { method: 'PUT', body: { n: 3 } });
      const rows = (await get('by_n?reduce=false')).body.rows.map((row: { id: string; key: number }) => [row.id, row.key]);
      assert.deepEqual(rows, [['c', 3], ['b', 20]]);
      assert.deepEqual((await get('by_n')).body.rows, [{ key: null, value: 2 }]);
    });

    test('update=false answers from the index as it is; the next default query catches up', async () => {
      await server.admin('/l/d', { method: 'PUT', body: { n: 4 } });
      assert.deepEqual((await get('by_n?update=false')).body.rows, [{ key: null, value: 2 }]);
      assert.deepEqual((await get('by_n')).body.rows, [{ key: null, value: 3 }]);
    });

    test('a design-document edit that keeps the views keeps the index (same signature); changing a view starts a new one', async () => {
      const info = async () => (await server.admin('/l/_design/app/_info')).body;
      const before = await info();
      assert.equal(before.name, 'app');
      assert.match(before.view_index.signature, /^[0-9a-f]{32}$/);
      assert.equal(before.view_index.language, 'javascript');
      const ddoc = (await server.admin('/l/_design/app')).body;
      await server.admin('/l/_design/app', { method: 'PUT', body: { ...ddoc, note: 'edited' } });
      assert.equal((await info()).view_index.signature, before.view_index.signature);
      const edited = (await server.admin('/l/_design/app')).body;
      edited.views.plain.map = 'function (doc) { emit(doc._id, 2); }';
      await server.admin('/l/_design/app', { method: 'PUT', body: edited });
      assert.notEqual((await info()).view_index.signature, before.view_index.signature);
      assert.deepEqual((await get('plain?limit=1')).body.rows[0].value, 2);
    });

    test('_view_cleanup (db admins, 202) drops indexes no design document uses; _compact/{ddoc} answers 202', async () => {
      const cleanup = await server.admin('/l/_view_cleanup', { method: 'POST', headers: { 'content-type': 'application/json' } });
      assert.deepEqual([cleanup.status, cleanup.body], [202, { ok: true }]);
      assert.equal((await get('plain?limit=1')).status, 200);
      const compact = await server.admin('/l/_compact/app', { method: 'POST', headers: { 'content-type': 'application/json' } });
      assert.deepEqual([compact.status, compact.body], [202, { ok: true }]);
      assert.equal((await server.admin('/l/_compact/none', { method: 'POST', headers: { 'content-type': 'application/json' } })).status, 404);
    });

    test('members read views; others get 401/403 as for the database', async () => {
      await server.admin('/_users/org.couchdb.user:mia', { method: 'PUT', body: { name: 'mia', password: 'pw', roles: [], type: 'user' } });
      await server.admin('/l/_security', { method: 'PUT', body: { members: { names: ['mia'], roles: [] }, admins: { names: [], roles: [] } } });
      assert.equal((await server.request('/l/_design/app/_view/plain')).status, 401);
      assert.equal((await server.request('/l/_design/app/_view/plain', { auth: ['mia', 'pw'] })).status, 200);
      assert.equal((await server.request('/l/_view_cleanup', { method: 'POST', auth: ['mia', 'pw'], headers: { 'content-type': 'application/json' } })).status, 401);
    });

    test('_changes?filter=_view passes the documents the map function emits for', async () => {
      const res = await server.admin('/l/_changes?filter=_view&view=app/by_n');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.results.map((row: { id: string }) => row.id).sort(), ['b', 'c', 'd']);
    });
  });
}

describe('sqlite: a view index survives a restart', () => {
  test('the rows and the sequence reached are there after reopening', async () => {
    const first = await BACKEND_SERVERS[0]!.start({ keepData: true });
    await first.admin('/r', { method: 'PUT' });
    await first.admin('/r/one', { method: 'PUT', body: { n: 1 } });
    await first.admin('/r/_design/d', { method: 'PUT', body: { views: { v: { map: 'function (doc) { emit(doc.n, null); }' } } } });
    assert.equal((await first.admin('/r/_design/d/_view/v')).body.total_rows, 1);
    await first.close();
    const { startServer } = await import('../support/server.js');
    const second = await startServer({ dataDir: first.dataDir, keepData: true });
    try {
      const res = await second.admin('/r/_design/d/_view/v?update=false');
      assert.deepEqual(res.body.rows.map((row: { id: string }) => row.id), ['one']);
    } finally {
      await second.close();
    }
  });
});
