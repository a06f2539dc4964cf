/**
 * View details as CouchDB 3.5 answers them: the ranking built-in reduces, the save-time check of
 * built-in names, POST bodies of views and listings, `keys` with paging and `descending`,
 * `_design_docs`'s `total_rows`, `_temp_view`, joins on an emitted `_rev`, and purges.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

const MAP = 'function (doc) { if (doc.k !== undefined) emit(doc.k, doc.v); }';
const DDOC = {
  views: {
    top: { map: MAP, reduce: '_top_2' },
    bottom: { map: MAP, reduce: '_bottom_3' },
    first: { map: MAP, reduce: '_first' },
    last: { map: MAP, reduce: '_last' },
    plain: { map: MAP },
    join: { map: 'function (doc) { if (doc.link) emit(doc._id, { _id: doc.link, _rev: doc.linkRev }); }' },
  },
};
// Values: a mix of types, duplicates included, to show collation and distinctness.
const DOCS = [
  { _id: 'a', k: ['x', 1], v: 3 },
  { _id: 'b', k: ['x', 2], v: 'z' },
  { _id: 'c', k: ['x', 2], v: 3 },
  { _id: 'd', k: ['y', 1], v: [1] },
  { _id: 'e', k: ['y', 0], v: null },
  { _id: 'f', k: ['y', 0], v: 10 },
];

describeOnEachBackend('view details as CouchDB 3.5 answers them', (server) => {
  const bodyOf = async (path: string, init?: { method: string; body: unknown }) => {
    const res = await server().admin(path, init);
    assert.ok(res.status === 200 || res.status === 201, `${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  test('setup', async () => {
    assert.equal((await server().admin('/det', { method: 'PUT' })).status, 201);
    assert.equal((await server().admin('/det/_bulk_docs', { method: 'POST', body: { docs: DOCS } })).status, 201);
    assert.equal((await server().admin('/det/_design/app', { method: 'PUT', body: DDOC })).status, 201);
  });

  test('_top_N and _bottom_N: the N greatest or least distinct values in the collation', async () => {
    // Collation: null < numbers < strings < arrays.
    assert.deepEqual((await bodyOf('/det/_design/app/_view/top')).rows, [{ key: null, value: [[1], 'z'] }]);
    assert.deepEqual((await bodyOf('/det/_design/app/_view/bottom')).rows, [{ key: null, value: [null, 3, 10] }]);
    assert.deepEqual((await bodyOf('/det/_design/app/_view/top?group_level=1')).rows, [
      { key: ['x'], value: ['z', 3] },
      { key: ['y'], value: [[1], 10] },
    ]);
    assert.deepEqual((await bodyOf('/det/_design/app/_view/bottom?group=true&startkey=["x",2]&endkey=["y",0]')).rows, [
      { key: ['x', 2], value: [3, 'z'] },
      { key: ['y', 0], value: [null, 10] },
    ]);
  });

  test('_first and _last: the value of the least or greatest key (then document id), in either direction', async () => {
    assert.deepEqual((await bodyOf('/det/_design/app/_view/first')).rows, [{ key: null, value: 3 }]);
    assert.deepEqual((await bodyOf('/det/_design/app/_view/last')).rows, [{ key: null, value: [1] }]);
    assert.deepEqual((await bodyOf('/det/_design/app/_view/first?group_level=1&descending=true')).rows, [
      { key: ['y'], value: null },
      { key: ['x'], value: 3 },
    ]);
    assert.deepEqual((await bodyOf('/det/_design/app/_view/last?group=true&key=["x",2]')).rows, [{ key: ['x', 2], value: 3 }]);
    assert.deepEqual((await bodyOf('/det/_design/app/_view/first?startkey=["z"]')).rows, [], 'an empty range has no row');
    assert.deepEqual((await bodyOf('/det/_design/app/_view/first?reduce=false&limit=1')).rows, [{ id: 'a', key: ['x', 1], value: 3 }]);
  });

  test('an unknown built-in reduce or a rank outside 1..100 is refused at save with 400 invalid_design_doc', async () => {
    const save = (reduce: string) => server().admin(`/det/_design/bad${Math.random().toString(36).slice(2)}`, { method: 'PUT', body: { views: { v: { map: MAP, reduce } } } });
    const cases: [string, string][] = [
      ['_foo', '`_foo` is not a supported reduce function.'],
      ['_top_0', 'rank value must be between 1 and 100'],
      ['_bottom_101', 'rank value must be between 1 and 100'],
      ['_top_x', 'invalid rank reducer'],
      ['_top', '`_top` is not a supported reduce function.'],
    ];
    for (const [reduce, reason] of cases) {
      const res = await save(reduce);
      assert.deepEqual([res.status, res.body], [400, { error: 'invalid_design_doc', reason }], reduce);
    }
    for (const reduce of ['_top_1', '_bottom_100', '_firstly', '_last', '_sum', '_count', '_stats', '_approx_count_distinct', '_sumfoo']) {
      assert.equal((await save(reduce)).status, 201, reduce);
    }
  });

  test('POST _view takes any query options in its body ({} too); `queries` there is refused', async () => {
    const empty = await bodyOf('/det/_design/app/_view/plain', { method: 'POST', body: {} });
    assert.equal(empty.rows.length, 6);
    const stable = await bodyOf('/det/_design/app/_view/plain', { method: 'POST', body: { stable: true, update: 'lazy', limit: 2 } });
    assert.deepEqual(stable.rows.map((row: { id: string }) => row.id), ['a', 'b']);
    const bad = await server().admin('/det/_design/app/_view/plain', { method: 'POST', body: { update: 'sometimes' } });
    assert.deepEqual([bad.status, bad.body.error], [400, 'query_parse_error']);
    const queries = await server().admin('/det/_design/app/_view/plain', { method: 'POST', body: { queries: [{}] } });
    assert.deepEqual([queries.status, queries.body], [400, { error: 'bad_request', reason: 'The `queries` parameter is no longer supported at this endpoint' }]);
  });

  test('_temp_view is 410 gone; a missing database is 404 first', async () => {
    const gone = await server().admin('/det/_temp_view', { method: 'POST', body: { map: MAP } });
    assert.deepEqual([gone.status, gone.body], [410, { error: 'gone', reason: 'Temporary views are not supported in CouchDB' }]);
    assert.equal((await server().admin('/nodb-det/_temp_view', { method: 'POST', body: { map: MAP } })).status, 404);
  });

  test('keys with limit and skip in a POST body page _all_docs, _design_docs and views', async () => {
    const all = await bodyOf('/det/_all_docs', { method: 'POST', body: { keys: ['a', 'b', 'c', 'nope'], limit: 2, skip: 1 } });
    assert.deepEqual(all.rows.map((row: { key: string }) => row.key), ['b', 'c']);
    const design = await bodyOf('/det/_design_docs', { method: 'POST', body: { keys: ['_design/app', '_design/x', 'a'], skip: 1 } });
    assert.deepEqual(design.rows.map((row: { key: string; error?: string }) => [row.key, row.error ?? null]), [['_design/x', 'not_found'], ['a', 'not_found']]);
    const viewed = await bodyOf('/det/_design/app/_view/plain', { method: 'POST', body: { keys: [['x', 2], ['y', 0], ['x', 1]], limit: 2, skip: 1 } });
    assert.deepEqual(viewed.rows.map((row: { id: string }) => row.id), ['c', 'e']);
    const overridden = await bodyOf('/det/_all_docs?limit=1', { method: 'POST', body: { keys: ['a', 'b', 'c'], limit: 3 } });
    assert.deepEqual(overridden.rows.map((row: { key: string }) => row.key), ['a'], 'the query string applies after the body');
  });

  test('descending=true with keys answers the keys last first, each key`s rows descending', async () => {
    const viewed = await bodyOf('/det/_design/app/_view/plain?descending=true', { method: 'POST', body: { keys: [['x', 2], ['y', 0]] } });
    assert.deepEqual(viewed.rows.map((row: { id: string }) => row.id), ['f', 'e', 'c', 'b']);
    const all = await bodyOf('/det/_all_docs?descending=true', { method: 'POST', body: { keys: ['a', 'c', 'b'] } });
    assert.deepEqual(all.rows.map((row: { key: string }) => row.key), ['b', 'c', 'a']);
  });

  test('_design_docs total_rows counts the design documents', async () => {
    const designs = (await bodyOf('/det/_design_docs')).rows.length;
    assert.ok(designs >= 2);
    assert.equal((await bodyOf('/det/_design_docs')).total_rows, designs);
    assert.equal((await bodyOf('/det/_design_docs', { method: 'POST', body: { keys: ['_design/app'] } })).total_rows, designs);
    assert.equal((await bodyOf('/det/_all_docs')).total_rows, DOCS.length + designs);
  });

  test('include_docs joins an emitted {_id, _rev} to that revision of the document', async () => {
    const first = await bodyOf('/det/target', { method: 'PUT', body: { n: 1 } });
    const second = await bodyOf(`/det/target?rev=${first.rev}`, { method: 'PUT', body: { n: 2 } });
    assert.equal((await server().admin('/det/linkold', { method: 'PUT', body: { link: 'target', linkRev: first.rev } })).status, 201);
    assert.equal((await server().admin('/det/linknew', { method: 'PUT', body: { link: 'target' } })).status, 201);
    const rows = (await bodyOf('/det/_design/app/_view/join?include_docs=true')).rows;
    assert.deepEqual(rows.map((row: { id: string; doc: { _rev: string; n: number } }) => [row.id, row.doc._rev, row.doc.n]), [
      ['linknew', second.rev, 2],
      ['linkold', first.rev, 1],
    ]);
  });

  test('options.include_design maps design documents; options.local_seq gives _local_seq', async () => {
    const ddoc = {
      options: { include_design: true, local_seq: true },
      views: { ids: { map: 'function (doc) { emit(doc._id, doc._local_seq); }' } },
    };
    assert.equal((await server().admin('/det/_design/withdesign', { method: 'PUT', body: ddoc })).status, 201);
    const rows = (await bodyOf('/det/_design/withdesign/_view/ids')).rows as { id: string; value: number }[];
    const ids = rows.map((row) => row.id);
    assert.ok(ids.includes('_design/app') && ids.includes('_design/withdesign') && ids.includes('a'), JSON.stringify(ids));
    const changes = (await bodyOf('/det/_changes')).results as { id: string; seq: string }[];
    for (const row of rows) {
      const change = changes.find((entry) => entry.id === row.id)!;
      assert.equal(row.value, Number.parseInt(change.seq, 10), row.id);
    }
  });

  test('a purged document leaves the views', async () => {
    const doc = await bodyOf('/det/purged', { method: 'PUT', body: { k: ['p'], v: 1 } });
    assert.deepEqual((await bodyOf('/det/_design/app/_view/plain?key=["p"]')).rows.map((row: { id: string }) => row.id), ['purged']);
    assert.equal((await server().admin('/det/_purge', { method: 'POST', body: { purged: [doc.rev] } })).status, 201);
    assert.deepEqual((await bodyOf('/det/_design/app/_view/plain?key=["p"]')).rows, []);
    assert.deepEqual((await bodyOf('/det/_design/app/_view/first?group=true&key=["p"]')).rows, []);
  });

  test('after a purge, the index reaches the update_seq of the database: the purge is a sequence without a change to read', async () => {
    const doc = await bodyOf('/det/purged-last', { method: 'PUT', body: { k: ['q'], v: 1 } });
    await bodyOf('/det/_design/app/_view/plain?limit=0');
    assert.equal((await server().admin('/det/_purge', { method: 'POST', body: { 'purged-last': [doc.rev] } })).status, 201);
    const dbSeq = (await bodyOf('/det')).update_seq;
    assert.equal((await bodyOf('/det/_design/app/_view/plain?update_seq=true&limit=0')).update_seq, dbSeq);
    assert.equal((await bodyOf('/det/_design/app/_info')).view_index.update_seq, Number.parseInt(dbSeq, 10));
    // Already up to date: stale=ok answers the same sequence without building.
    assert.equal((await bodyOf('/det/_design/app/_view/plain?update_seq=true&limit=0&update=false')).update_seq, dbSeq);
  });
});

describeOnEachBackend(
  'a map function that never ends',
  (server) => {
    test('answers 500 os_process_error "OS process timed out." as CouchDB, and the server keeps answering', async () => {
      assert.equal((await server().admin('/loop', { method: 'PUT' })).status, 201);
      assert.equal((await server().admin('/loop/one', { method: 'PUT', body: { n: 1 } })).status, 201);
      const ddoc = { views: { v: { map: 'function (doc) { while (true) {} }' }, ok: { map: 'function (doc) { emit(doc.n, null); }' } } };
      assert.equal((await server().admin('/loop/_design/spin', { method: 'PUT', body: ddoc })).status, 201);
      const res = await server().admin('/loop/_design/spin/_view/v');
      assert.deepEqual([res.status, res.body], [500, { error: 'os_process_error', reason: 'OS process timed out.' }]);
      assert.equal((await server().admin('/loop/_design/spin/_view/ok')).status, 500, 'the index of the design document fails as a whole');
      const fixed = { _rev: (await server().admin('/loop/_design/spin')).body._rev, views: { ok: ddoc.views.ok } };
      assert.equal((await server().admin('/loop/_design/spin', { method: 'PUT', body: fixed })).status, 201);
      assert.deepEqual((await server().admin('/loop/_design/spin/_view/ok')).body.rows, [{ id: 'one', key: 1, value: null }]);
    });
  },
  '[couchdb]\nos_process_timeout = 300\n',
);

describeOnEachBackend('a JavaScript reduce whose output does not shrink', (server) => {
  test('gives CouchDB`s reduce_overflow_error row; small groups still reduce', async () => {
    assert.equal((await server().admin('/grow', { method: 'PUT' })).status, 201);
    const docs = Array.from({ length: 100 }, (_, i) => ({ _id: `d${String(i).padStart(3, '0')}`, k: i % 2, text: 'x'.repeat(100) }));
    assert.equal((await server().admin('/grow/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    const reduce = 'function (keys, values, rereduce) { return rereduce ? [].concat.apply([], values) : values; }';
    const ddoc = { views: { all: { map: 'function (doc) { emit(doc.k, doc.text); }', reduce } } };
    assert.equal((await server().admin('/grow/_design/g', { method: 'PUT', body: ddoc })).status, 201);
    const whole = await server().admin('/grow/_design/g/_view/all');
    assert.equal(whole.status, 200);
    assert.equal(whole.body.rows.length, 1);
    const [row] = whole.body.rows;
    assert.deepEqual([row.key, row.error], [null, 'reduce_overflow_error']);
    assert.match(row.reason, /^Reduce output must shrink more rapidly: input size: \d+ output size: \d+ context: /);
    const small = await server().admin('/grow/_design/g/_view/all?startkey=0&endkey=0&startkey_docid=d000&endkey_docid=d002');
    assert.deepEqual(small.body.rows, [{ key: null, value: ['x'.repeat(100), 'x'.repeat(100)] }], 'under the threshold');
    const few = await server().admin('/grow/_design/g/_view/all?reduce=false&limit=3');
    assert.equal(few.body.rows.length, 3);
    const pair = await server().admin('/grow/_design/g/_view/all?group=true', { method: 'POST', body: { keys: [0] } });
    assert.equal(pair.body.rows[0].error, 'reduce_overflow_error', '50 rows of 100 characters still overflow');
  });
});
