// Real client: PouchDB 9 (pouchdb-core + pouchdb-adapter-http + pouchdb-mapreduce 9.0.0) `query()`
// against the real binary, with facts from PouchDB's own mapreduce suite (tests/mapreduce/).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import PouchDB, { type Database, type QueryOptions } from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import mapreduce from 'pouchdb-mapreduce';
import { ADMIN_NAME, ADMIN_PASSWORD, createDatabase, startClientServer, type ClientServer } from '../support/clients.js';

PouchDB.plugin(httpAdapter).plugin(mapreduce);

const DB = 'pouch-views';

const VIEWS = {
  basic: { map: 'function (doc) { if (doc.foo !== undefined) emit(doc.foo, doc.val); }' },
  sum: { map: 'function (doc) { if (doc.num !== undefined) emit(null, doc.num); }', reduce: '_sum' },
  garbage: { map: 'function (doc) { if (doc.tag) emit(doc.tag, 1); }', reduce: '_sum\n \r\nandothergarbage' },
  stats_bad: { map: 'function (doc) { if (doc.tag) emit(doc.tag, "lala"); }', reduce: '_stats' },
  sum_bad: { map: 'function (doc) { if (doc.mixed !== undefined) emit(null, doc.mixed); }', reduce: '_sum' },
  user_error: { map: 'function (doc) { emit(doc.nonexistent.foo); }' },
  reduce_error: { map: 'function (doc) { if (doc.tag) emit(doc.tag); }', reduce: 'function (keys) { return keys[0].foo.bar; }' },
  reduce_zero: { map: 'function (doc) { if (doc.tag) emit(doc.tag); }', reduce: 'function () { return 0; }' },
  group: { map: 'function (doc) { if (doc.date) emit(doc.date, 1); }', reduce: '_count' },
  join: { map: 'function (doc) { if (doc.owner) emit(doc._id, { _id: doc.owner }); }' },
};

describe('PouchDB 9 query() (pouchdb-mapreduce over http) against the real binary', () => {
  let server: ClientServer;
  let db: Database;

  before(async () => {
    server = await startClientServer();
    await createDatabase(server.url, DB, []);
    db = new PouchDB(`${server.url}/${DB}`, { auth: { username: ADMIN_NAME, password: ADMIN_PASSWORD }, skip_setup: true });
    await db.bulkDocs([
      { _id: 'a', foo: 'bar', val: 1 },
      { _id: 'b', foo: 'baz', val: 2 },
      { _id: 'c', foo: 'Bar', val: 3 },
      { _id: 'n1', num: 2 },
      { _id: 'n2', num: [1, 2, 3, 4] },
      { _id: 'n3', num: [3, 4] },
      { _id: 'n4', num: 1 },
      { _id: 't1', tag: 'bar' },
      { _id: 't2', tag: 'bar' },
      { _id: 't3', tag: 'baz' },
      { _id: 'm1', mixed: 1 },
      { _id: 'm2', mixed: 'baz' },
      { _id: 'd1', date: [2024, 1, 5] },
      { _id: 'd2', date: [2024, 1, 9] },
      { _id: 'd3', date: [2024, 2, 1] },
      { _id: 'pet', owner: 'a' },
    ] as never);
    await db.put({ _id: '_design/v', views: VIEWS } as never);
  });
  after(async () => server?.close());

  test('basic view: keys in collation order ("bar" < "Bar" < "baz"), values, total_rows', async () => {
    const res = await db.query('v/basic');
    assert.deepEqual(res.rows.map((row) => [row.key, row.value, row.id]), [['bar', 1, 'a'], ['Bar', 3, 'c'], ['baz', 2, 'b']]);
    assert.equal(res.total_rows, 3);
  });

  test('startkey/endkey, inclusive_end=false, key, keys, descending, skip and limit', async () => {
    const keys = async (options: QueryOptions) => (await db.query('v/basic', options)).rows.map((row) => row.key);
    assert.deepEqual(await keys({ startkey: 'Bar', endkey: 'baz' }), ['Bar', 'baz']);
    assert.deepEqual(await keys({ startkey: 'bar', endkey: 'baz', inclusive_end: false }), ['bar', 'Bar']);
    assert.deepEqual(await keys({ key: 'baz' }), ['baz']);
    assert.deepEqual(await keys({ keys: ['baz', 'bar', 'nope'] }), ['baz', 'bar']);
    assert.deepEqual(await keys({ descending: true, skip: 1, limit: 1 }), ['Bar']);
  });

  test('built-in _sum adds lists of numbers position by position; trailing garbage after a built-in name is ignored', async () => {
    assert.deepEqual(await db.query('v/sum', { reduce: true, group: true }), { rows: [{ key: null, value: [7, 6, 3, 4] }] });
    assert.deepEqual((await db.query('v/garbage', { reduce: true, group_level: 999 })).rows.map((row) => row.value), [2, 1]);
  });

  test('_stats over strings and _sum over a string reject the query', async () => {
    await assert.rejects(db.query('v/stats_bad', { reduce: true, group_level: 999 }));
    await assert.rejects(db.query('v/sum_bad', { reduce: true, group: true }));
  });

  test('a map function that throws skips the documents; a reduce that throws gives null; a reduce of 0 stays 0', async () => {
    assert.deepEqual((await db.query('v/user_error')).rows, []);
    assert.deepEqual((await db.query('v/reduce_error', { group: true })).rows.map((row) => row.key), ['bar', 'baz']);
    assert.deepEqual((await db.query('v/reduce_error', { reduce: false })).rows.map((row) => row.key), ['bar', 'bar', 'baz']);
    assert.deepEqual((await db.query('v/reduce_zero', { group: true })).rows.map((row) => row.value), [0, 0]);
  });

  test('group_level groups array keys by their first members; multi-key fetches of a reduce view need group=true', async () => {
    assert.deepEqual((await db.query('v/group', { group_level: 2 })).rows, [{ key: [2024, 1], value: 2 }, { key: [2024, 2], value: 1 }]);
    await assert.rejects(db.query('v/group', { keys: [[2024, 1, 5], [2024, 2, 1]], group: false }), (error: { status?: number }) => error.status === 400);
    await assert.rejects(db.query('v/group', { keys: [[2024, 1, 5], [2024, 2, 1]] }), (error: { status?: number }) => error.status === 400);
    assert.equal((await db.query('v/group', { keys: [[2024, 1, 5], [2024, 2, 1]], reduce: false })).rows.length, 2);
    assert.equal((await db.query('v/group', { keys: [[2024, 1, 5], [2024, 2, 1]], group: true })).rows.length, 2);
  });

  test('include_docs follows a value {_id} to the linked document (joins)', async () => {
    const res = await db.query('v/join', { include_docs: true });
    assert.equal(res.rows[0]!.doc!._id, 'a');
  });

  test('a missing view is a 404; update_seq is there when asked; viewCleanup answers ok', async () => {
    await assert.rejects(db.query('v/unexisting'), (error: { status?: number }) => error.status === 404);
    assert.ok((await db.query('v/basic', { update_seq: true })).update_seq !== undefined);
    assert.ok((await db.viewCleanup()).ok);
  });
});
