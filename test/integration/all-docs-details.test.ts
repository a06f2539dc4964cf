/**
 * Issue 23, `_all_docs` details, against the real binary: `key` is a one-key range, `key` with
 * `keys` is a query_parse_error, `conflicts=true&include_docs=true` lists `_conflicts`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from '../support/http.js';
import { adminDataDir, startDivan } from '../support/process.js';

test('the real binary answers _all_docs key= on a deleted document with no row, key with keys with 400, conflicts with _conflicts', async () => {
  const { args, auth, remove } = adminDataDir('divan-alldocs-');
  const divan = await startDivan(args);
  try {
    await request(divan.url, '/db', { method: 'PUT', auth });
    const written = await request(divan.url, '/db/gone', { method: 'PUT', auth, body: {} });
    await request(divan.url, `/db/gone?rev=${written.body.rev}`, { method: 'DELETE', auth });
    assert.deepEqual((await request(divan.url, '/db/_all_docs?key=%22gone%22', { auth })).body.rows, []);
    const both = await request(divan.url, '/db/_all_docs?key=%22gone%22', { method: 'POST', auth, body: { keys: ['gone', 'x'] } });
    assert.deepEqual([both.status, both.body.error], [400, 'query_parse_error']);
    const docs = [
      { _id: 'split', _rev: `1-${'a'.repeat(32)}` },
      { _id: 'split', _rev: `1-${'b'.repeat(32)}` },
    ];
    await request(divan.url, '/db/_bulk_docs', { method: 'POST', auth, body: { new_edits: false, docs } });
    const listed = await request(divan.url, '/db/_all_docs?conflicts=true&include_docs=true', { auth });
    assert.deepEqual(listed.body.rows[0].doc._conflicts, [`1-${'a'.repeat(32)}`]);
  } finally {
    assert.equal(await divan.stop('SIGTERM'), 0);
    remove();
  }
});
