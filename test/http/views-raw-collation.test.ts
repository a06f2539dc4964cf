// Views with options.collation = "raw": keys in Erlang's term order (couch_mrview_util:maybe_define_less_fun), as CouchDB 3.5.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';
import type { Json } from '../../src/json/json.js';

const KEYS: Json[] = ['a', 'B', '\u00e9', 1, 2.5, false, null, true, {}, { a: 'a' }, [], ['a'], ['a', 1], ['a', 'x'], ['b']];
const ICU_ORDER: Json[] = [null, false, true, 1, 2.5, 'a', 'B', '\u00e9', [], ['a'], ['a', 1], ['a', 'x'], ['b'], {}, { a: 'a' }];
const RAW_ORDER: Json[] = [1, 2.5, false, null, true, {}, { a: 'a' }, [], ['a'], ['a', 1], ['a', 'x'], ['b'], 'B', 'a', '\u00e9'];
const q = (value: Json): string => encodeURIComponent(JSON.stringify(value));

describeOnEachBackend('views with raw collation', (server) => {
  const admin = (path: string, options: Parameters<ReturnType<typeof server>['admin']>[1] = {}) => server().admin(path, options);
  const map = 'function (doc) { if (doc.i !== undefined) emit(doc.k, doc.i); }';
  const raw = { collation: 'raw' };
  before(async () => {
    assert.equal((await admin('/rawviews', { method: 'PUT' })).status, 201);
    const docs = KEYS.map((k, i) => ({ _id: `d${String(i).padStart(2, '0')}`, k, i }));
    assert.equal((await admin('/rawviews/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    const views = {
      icu: { map },
      raw: { map, options: raw },
      sum: { map, reduce: '_sum', options: raw },
      count: { map, reduce: '_count', options: raw },
      js: { map, reduce: 'function (keys, values, rereduce) { return rereduce ? values.reduce(function (a, b) { return a + b; }, 0) : values.length; }', options: raw },
    };
    assert.equal((await admin('/rawviews/_design/c', { method: 'PUT', body: { views } })).status, 201);
  });
  const rows = async (path: string, options: Parameters<typeof admin>[1] = {}) => {
    const res = await admin(path, options);
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    return res.body.rows as { id?: string; key: Json; value: Json }[];
  };
  const keys = async (path: string) => (await rows(path)).map((row) => row.key);

  test('a raw view orders keys numbers < false < null < true < objects < arrays < strings by bytes; the default view as ICU', async () => {
    assert.deepEqual(await keys('/rawviews/_design/c/_view/raw'), RAW_ORDER);
    assert.deepEqual(await keys('/rawviews/_design/c/_view/icu'), ICU_ORDER);
    assert.deepEqual(await keys('/rawviews/_design/c/_view/raw?descending=true'), [...RAW_ORDER].reverse());
  });

  test('ranges, keys and the range check follow the raw order', async () => {
    assert.deepEqual(await keys(`/rawviews/_design/c/_view/raw?start_key=false&end_key=true`), [false, null, true]);
    // {} is no high sentinel under raw: it sorts before strings and arrays.
    assert.deepEqual(await keys(`/rawviews/_design/c/_view/raw?start_key=${q(['a'])}&end_key=${q(['a', {}])}`), [['a'], ['a', 1]]);
    assert.deepEqual(await keys(`/rawviews/_design/c/_view/raw?start_key=${q('B')}&end_key=${q('a')}&inclusive_end=false`), ['B']);
    assert.deepEqual(await keys(`/rawviews/_design/c/_view/raw?start_key=${q([])}&end_key=true&descending=true`), [[], { a: 'a' }, {}, true]);
    assert.deepEqual(await keys(`/rawviews/_design/c/_view/raw?keys=${q(['a', null, { a: 'a' }, 'A'])}`), ['a', null, { a: 'a' }]);
    const posted = await rows('/rawviews/_design/c/_view/raw', { method: 'POST', body: { keys: [['a', 1], 2.5] } });
    assert.deepEqual(posted.map((row) => row.id), ['d12', 'd04']);
    const reversed = await admin(`/rawviews/_design/c/_view/raw?start_key=${q('a')}&end_key=${q([])}`);
    assert.deepEqual([reversed.status, reversed.body.error], [400, 'query_parse_error']);
    assert.equal((await admin(`/rawviews/_design/c/_view/icu?start_key=${q('a')}&end_key=${q([])}`)).status, 200);
  });

  test('reduce under raw: whole, grouped by level and exact, over ranges that cut groups, built-in and JavaScript', async () => {
    const total = KEYS.reduce<number>((sum, _k, i) => sum + i, 0);
    assert.deepEqual(await rows('/rawviews/_design/c/_view/sum'), [{ key: null, value: total }]);
    const level1 = await rows('/rawviews/_design/c/_view/count?group_level=1');
    assert.deepEqual(level1.map((row) => row.key), [1, 2.5, false, null, true, {}, { a: 'a' }, [], ['a'], ['b'], 'B', 'a', '\u00e9']);
    assert.equal(level1.find((row) => JSON.stringify(row.key) === '["a"]')!.value, 3);
    const cut = await rows(`/rawviews/_design/c/_view/count?group_level=1&start_key=${q(['a', 1])}&end_key=${q('B')}`);
    assert.deepEqual(cut, [{ key: ['a'], value: 2 }, { key: ['b'], value: 1 }, { key: 'B', value: 1 }]);
    assert.deepEqual(await keys('/rawviews/_design/c/_view/sum?group=true&limit=4&skip=2'), [false, null, true, {}]);
    assert.deepEqual(await rows(`/rawviews/_design/c/_view/sum?group=true&keys=${q(['a', ['a', 'x']])}`), [{ key: 'a', value: 0 }, { key: ['a', 'x'], value: 13 }]);
    assert.deepEqual(await rows(`/rawviews/_design/c/_view/sum?start_key=false&end_key=true`), [{ key: null, value: 5 + 6 + 7 }]);
    const js = await rows('/rawviews/_design/c/_view/js?group_level=1');
    assert.deepEqual(js.map((row) => row.key), level1.map((row) => row.key));
    assert.deepEqual(js.map((row) => row.value), level1.map((row) => row.value));
  });

  test('switching a view to raw changes its signature and rebuilds its rows in the raw order', async () => {
    assert.equal((await admin('/rawviews/_design/switch', { method: 'PUT', body: { views: { v: { map } } } })).status, 201);
    assert.deepEqual(await keys('/rawviews/_design/switch/_view/v'), ICU_ORDER);
    const before = (await admin('/rawviews/_design/switch/_info')).body.view_index.signature;
    const doc = (await admin('/rawviews/_design/switch')).body;
    assert.equal((await admin('/rawviews/_design/switch', { method: 'PUT', body: { ...doc, views: { v: { map, options: raw } } } })).status, 201);
    assert.deepEqual(await keys('/rawviews/_design/switch/_view/v'), RAW_ORDER);
    assert.notEqual((await admin('/rawviews/_design/switch/_info')).body.view_index.signature, before);
  });

  test('a partitioned database\'s raw view orders each partition\'s keys raw', async () => {
    assert.equal((await admin('/rawparts?partitioned=true', { method: 'PUT' })).status, 201);
    const docs = KEYS.flatMap((k, i) => ['p', 'q'].map((p) => ({ _id: `${p}:d${String(i).padStart(2, '0')}`, k, i })));
    assert.equal((await admin('/rawparts/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    assert.equal((await admin('/rawparts/_design/c', { method: 'PUT', body: { views: { raw: { map, options: raw } } } })).status, 201);
    assert.deepEqual(await keys('/rawparts/_partition/q/_design/c/_view/raw'), RAW_ORDER);
    assert.deepEqual(await keys(`/rawparts/_partition/p/_design/c/_view/raw?start_key=${q({})}&end_key=${q(['a'])}`), [{}, { a: 'a' }, [], ['a']]);
  });
});
