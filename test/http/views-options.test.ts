/**
 * Every option of a view query over HTTP, on every selected backend: keys in CouchDB's collation,
 * ranges with document ids, paging, reduce and grouping, documents, staleness, and CouchDB's errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKEND_SERVERS } from '../support/backend-servers.js';
import { COLLATION_TABLE } from '../support/collation-table.js';
import type { TestServer } from '../support/server.js';

const q = (params: Record<string, unknown>): string =>
  '?' + Object.entries(params).map(([name, value]) => `${name}=${encodeURIComponent(typeof value === 'string' && !['startkey_docid', 'endkey_docid', 'stale', 'update'].includes(name) ? JSON.stringify(value) : String(typeof value === 'string' ? value : JSON.stringify(value)))}`).join('&');

const DDOC = {
  views: {
    collation: { map: 'function (doc) { if (doc.foo !== undefined) emit(doc.foo, null); }' },
    by_n: { map: 'function (doc) { if (doc.n !== undefined) emit(doc.n, doc.n); }', reduce: '_sum' },
    tags: { map: 'function (doc) { if (doc.tags) doc.tags.forEach(function (t) { emit([doc.group, t], 1); }); }', reduce: '_count' },
    stats: { map: 'function (doc) { if (doc.n !== undefined) emit(doc.group, doc.n); }', reduce: '_stats' },
    distinct: { map: 'function (doc) { if (doc.n !== undefined) emit(doc.n % 3, null); }', reduce: '_approx_count_distinct' },
    linked: { map: 'function (doc) { if (doc.owner) emit(doc._id, { _id: doc.owner }); }' },
    js: { map: 'function (doc) { if (doc.n !== undefined) emit(doc.group, doc.n); }', reduce: 'function (keys, values, rereduce) { return sum(values); }' },
  },
};

for (const backend of BACKEND_SERVERS) {
  describe(`${backend.name}: view query options`, () => {
    let server: TestServer;
    const view = async (name: string, params: Record<string, unknown> = {}) => server.admin(`/o/_design/app/_view/${name}${Object.keys(params).length ? q(params) : ''}`);
    before(async () => {
      server = await backend.start();
      await server.admin('/o', { method: 'PUT' });
      const docs: object[] = COLLATION_TABLE.map((foo, i) => ({ _id: `c${String(i).padStart(2, '0')}`, foo }));
      docs.push({ _id: 'zw1', foo: 'c' }, { _id: 'zw2', foo: 'c\u200B' }, { _id: 'zw3', foo: 'c\u200B\u200B' });
      for (let i = 0; i < 10; i++) docs.push({ _id: `n${i}`, n: i, group: i < 4 ? 'a' : 'b', tags: i < 3 ? ['x', 'y'] : ['x'] });
      docs.push({ _id: 'pet', owner: 'n1' }, { _id: 'stray', owner: 'nobody' });
      assert.equal((await server.admin('/o/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
      assert.equal((await server.admin('/o/_design/app', { method: 'PUT', body: DDOC })).status, 201);
    });
    after(async () => server.close());

    test('rows come in CouchDB\'s collation order (keys ICU holds equal sorted by document id), and reversed with descending', async () => {
      const up = await view('collation');
      assert.equal(up.status, 200);
      const keys = up.body.rows.map((row: { key: unknown }) => row.key);
      const expected = [...COLLATION_TABLE];
      expected.splice(expected.indexOf('B') + 3, 0, 'c', 'c\u200B', 'c\u200B\u200B');
      assert.deepEqual(keys, expected);
      assert.equal(up.body.total_rows, expected.length);
      assert.equal(up.body.offset, 0);
      const down = await view('collation', { descending: true });
      assert.deepEqual(down.body.rows.map((row: { key: unknown }) => row.key), [...expected].reverse());
    });

    test('key= finds every key of the collation table, with its offset; ICU-equal keys match together', async () => {
      for (const key of COLLATION_TABLE) {
        const res = await view('collation', { key });
        assert.deepEqual(res.body.rows.map((row: { key: unknown }) => row.key), [key], JSON.stringify(key));
      }
      const c = await view('collation', { key: 'c' });
      assert.deepEqual(c.body.rows.map((row: { id: string }) => row.id), ['zw1', 'zw2', 'zw3']);
    });

    test('startkey/endkey, inclusive_end both directions, start/end docids, skip, limit and offset', async () => {
      const keys = async (params: Record<string, unknown>) => (await view('collation', params)).body.rows.map((row: { key: unknown }) => row.key);
      assert.deepEqual(await keys({ startkey: 'a', endkey: 'b' }), ['a', 'A', 'aa', 'b']);
      assert.deepEqual(await keys({ startkey: 'a', endkey: 'b', inclusive_end: false }), ['a', 'A', 'aa']);
      assert.deepEqual(await keys({ startkey: 'b', endkey: 'a', descending: true }), ['b', 'aa', 'A', 'a']);
      assert.deepEqual(await keys({ startkey: 'b', endkey: 'a', descending: true, inclusive_end: false }), ['b', 'aa', 'A']);
      assert.deepEqual(await keys({ start_key: ['b'], end_key: ['b', 'd'] }), [['b'], ['b', 'c'], ['b', 'c', 'a'], ['b', 'd']]);
      const ids = async (params: Record<string, unknown>) => (await view('collation', params)).body.rows.map((row: { id: string }) => row.id);
      assert.deepEqual(await ids({ startkey: 'c', startkey_docid: 'zw2', endkey: 'c' }), ['zw2', 'zw3']);
      assert.deepEqual(await ids({ startkey: 'c', endkey: 'c', endkey_docid: 'zw2' }), ['zw1', 'zw2']);
      assert.deepEqual(await ids({ startkey: 'c', endkey: 'c', endkey_docid: 'zw2', inclusive_end: false }), ['zw1']);
      const page = await view('collation', { startkey: 'a', skip: 2, limit: 2 });
      assert.deepEqual(page.body.rows.map((row: { key: unknown }) => row.key), ['aa', 'b']);
      assert.equal(page.body.offset, COLLATION_TABLE.indexOf('a') + 2);
      assert.deepEqual((await view('collation', { limit: 0 })).body.rows, []);
    });

    test('keys= (GET and POST) answers each key in the given order; a single key in a POST body is a key', async () => {
      const get = await view('by_n', { keys: [3, 1, 42], reduce: false });
      assert.deepEqual(get.body.rows.map((row: { key: number }) => row.key), [3, 1]);
      const post = await server.admin('/o/_design/app/_view/by_n?reduce=false', { method: 'POST', body: { keys: [7, 2] } });
      assert.deepEqual(post.body.rows.map((row: { id: string }) => row.id), ['n7', 'n2']);
      const single = await server.admin('/o/_design/app/_view/by_n', { method: 'POST', body: { keys: [5] } });
      assert.deepEqual(single.body.rows, [{ key: null, value: 5 }]);
    });

    test('reduce, group and group_level with the built-ins', async () => {
      assert.deepEqual((await view('by_n')).body, { rows: [{ key: null, value: 45 }] });
      assert.deepEqual((await view('by_n', { startkey: 2, endkey: 4 })).body.rows, [{ key: null, value: 9 }]);
      assert.equal((await view('by_n', { reduce: false })).body.total_rows, 10);
      assert.deepEqual((await view('tags', { group: true, limit: 2 })).body.rows, [{ key: ['a', 'x'], value: 4 }, { key: ['a', 'y'], value: 3 }]);
      assert.deepEqual((await view('tags', { group_level: 1 })).body.rows, [{ key: ['a'], value: 7 }, { key: ['b'], value: 6 }]);
      assert.deepEqual((await view('tags', { group_level: 1, skip: 1 })).body.rows, [{ key: ['b'], value: 6 }]);
      assert.deepEqual((await view('tags', { group: true, descending: true, limit: 1 })).body.rows, [{ key: ['b', 'x'], value: 6 }]);
      assert.deepEqual((await view('stats', { group: true })).body.rows, [
        { key: 'a', value: { sum: 6, count: 4, min: 0, max: 3, sumsqr: 14 } },
        { key: 'b', value: { sum: 39, count: 6, min: 4, max: 9, sumsqr: 271 } },
      ]);
      assert.deepEqual((await view('distinct')).body.rows, [{ key: null, value: 3 }]);
      assert.deepEqual((await view('by_n', { keys: [1, 2, 1], group: true })).body.rows, [{ key: 1, value: 1 }, { key: 2, value: 2 }, { key: 1, value: 1 }]);
      assert.deepEqual((await view('js', { group: true })).body.rows, [{ key: 'a', value: 6 }, { key: 'b', value: 39 }]);
      assert.deepEqual((await view('by_n', { startkey: 100 })).body.rows, []);
    });

    test('include_docs shows each row\'s document, or the one a value {_id} links to (null when missing); conflicts adds _conflicts', async () => {
      const own = await view('by_n', { reduce: false, limit: 1, include_docs: true });
      assert.equal(own.body.rows[0].doc._id, 'n0');
      assert.equal(own.body.rows[0].doc.n, 0);
      const linked = await view('linked', { include_docs: true });
      assert.deepEqual(linked.body.rows.map((row: { id: string; doc: { _id: string } | null }) => [row.id, row.doc && row.doc._id]), [['pet', 'n1'], ['stray', null]]);
      const conflicted = await view('by_n', { reduce: false, key: 1, include_docs: true, conflicts: true });
      assert.equal(conflicted.status, 200);
      assert.equal(conflicted.body.rows[0].doc._conflicts, undefined);
    });

    test('update_seq, update=false, stale=ok, update=lazy, stable and sorted are accepted as CouchDB\'s', async () => {
      const withSeq = await view('by_n', { update_seq: true, limit: 0, reduce: false });
      assert.equal(typeof withSeq.body.update_seq, 'string');
      assert.match(withSeq.body.update_seq, /^\d+-/);
      for (const params of [{ update: 'false' }, { stale: 'ok' }, { stale: 'update_after' }, { update: 'lazy' }, { stable: true }, { sorted: false }]) {
        const res = await view('by_n', { ...params, reduce: false, limit: 1 });
        assert.equal(res.status, 200, JSON.stringify(params));
      }
    });

    test('POST …/_view/{v}/queries answers one result per query, query-string options first', async () => {
      const res = await server.admin('/o/_design/app/_view/by_n/queries?reduce=false', { method: 'POST', body: { queries: [{ keys: [1, 2] }, { startkey: 8, limit: 5 }, { reduce: true }] } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.results.map((result: { rows: { key: unknown }[] }) => result.rows.map((row) => row.key)), [[1, 2], [8, 9], [null]]);
      assert.equal(res.body.results[0].total_rows, 10);
    });
  });
}
