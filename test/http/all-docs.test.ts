/**
 * `_all_docs` details PouchDB's suite checks against CouchDB: `key` is a range of one key, `key`
 * and `keys` together are refused, `conflicts=true` with `include_docs=true` lists `_conflicts`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

const branch = (generation: number, digit: string): string => `${generation}-${digit.repeat(32)}`;

describe('_all_docs', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/ad', { method: 'PUT' });
    for (const id of ['1', '2', 'gone']) await server.admin(`/ad/${id}`, { method: 'PUT', body: { n: id } });
    const gone = await server.admin('/ad/gone');
    await server.admin(`/ad/gone?rev=${gone.body._rev}`, { method: 'DELETE' });
    // Two branches of `split`: the longer (2-b…) wins, 1-c… stays a live conflict.
    const docs = [
      { _id: 'split', _rev: branch(2, 'b'), _revisions: { start: 2, ids: ['b'.repeat(32), 'a'.repeat(32)] }, v: 'winner' },
      { _id: 'split', _rev: branch(1, 'c'), v: 'loser' },
    ];
    assert.equal((await server.admin('/ad/_bulk_docs', { method: 'POST', body: { new_edits: false, docs } })).status, 201);
  });
  after(async () => server.close());

  test('?key= of a live document gives its row alone', async () => {
    const res = await server.admin('/ad/_all_docs?key=%221%22');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.rows.map((row: { id: string }) => row.id), ['1']);
  });

  test('?key= of a deleted document gives no row (key is a range, as CouchDB)', async () => {
    const res = await server.admin('/ad/_all_docs?key=%22gone%22');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.rows, []);
  });

  test('?key= of a missing document gives no row, not a not_found row', async () => {
    const res = await server.admin('/ad/_all_docs?key=%22nobody%22&include_docs=true');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.rows, []);
  });

  test('?key= with startkey or endkey is no error', async () => {
    assert.equal((await server.admin('/ad/_all_docs?key=%221%22&startkey=%221%22')).status, 200);
    assert.equal((await server.admin('/ad/_all_docs?key=%221%22&endkey=%221%22')).status, 200);
  });

  test('key with a keys body is 400 query_parse_error; so are startkey or endkey with keys', async () => {
    const expected = { error: 'query_parse_error', reason: '`keys` is incompatible with `key`, `start_key` and `end_key`' };
    for (const query of ['key=%221%22', 'startkey=%221%22', 'end_key=%222%22']) {
      const res = await server.admin(`/ad/_all_docs?${query}`, { method: 'POST', body: { keys: ['1', '2'] } });
      assert.equal(res.status, 400, query);
      assert.deepEqual(res.body, expected, query);
    }
    const inQuery = await server.admin('/ad/_all_docs?key=%221%22&keys=%5B%221%22%2C%222%22%5D');
    assert.deepEqual([inQuery.status, inQuery.body], [400, expected]);
    const same = await server.admin('/ad/_all_docs?key=%221%22', { method: 'POST', body: { keys: ['1'] } });
    assert.equal(same.status, 200, 'CouchDB lets key go with keys naming that key alone');
    const emptyKeys = await server.admin('/ad/_all_docs?startkey=%221%22', { method: 'POST', body: { keys: [] } });
    assert.deepEqual([emptyKeys.status, emptyKeys.body.rows], [200, []]);
  });

  test('conflicts=true&include_docs=true puts _conflicts in each doc that has conflicts (range and keys)', async () => {
    const range = await server.admin('/ad/_all_docs?conflicts=true&include_docs=true');
    const docs = Object.fromEntries(range.body.rows.map((row: { id: string; doc: object }) => [row.id, row.doc]));
    assert.deepEqual(docs['split'], { _id: 'split', _rev: branch(2, 'b'), v: 'winner', _conflicts: [branch(1, 'c')] });
    assert.deepEqual(Object.keys(docs['1']), ['_id', '_rev', 'n'], 'no _conflicts member without conflicts');
    const keyed = await server.admin('/ad/_all_docs?conflicts=true&include_docs=true', { method: 'POST', body: { keys: ['split', 'gone', 'nobody'] } });
    assert.deepEqual(keyed.body.rows[0].doc._conflicts, [branch(1, 'c')]);
    assert.equal(keyed.body.rows[1].doc, null);
    assert.deepEqual(keyed.body.rows[2], { key: 'nobody', error: 'not_found' });
  });

  test('conflicts=true without include_docs changes nothing; include_docs without conflicts has no _conflicts', async () => {
    const plain = await server.admin('/ad/_all_docs?conflicts=true&key=%22split%22');
    assert.deepEqual(plain.body.rows, [{ id: 'split', key: 'split', value: { rev: branch(2, 'b') } }]);
    const docs = await server.admin('/ad/_all_docs?include_docs=true&key=%22split%22');
    assert.equal('_conflicts' in docs.body.rows[0].doc, false);
  });
});
