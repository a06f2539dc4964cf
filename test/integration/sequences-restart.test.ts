/**
 * Issue 23, sequences, against the real binary: a sequence given out (CouchDB 3's `N-<opaque>`)
 * resumes `_changes` at the same place after the server restarts on the same SQLite data.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from '../support/http.js';
import { adminDataDir, startDivan } from '../support/process.js';
import { seqNumber } from '../support/sequences.js';

test('the real binary resumes _changes from an N-<opaque> sequence it gave out before a restart (SQLite)', async () => {
  const { args, auth, remove } = adminDataDir('divan-seqs-');
  try {
    const first = await startDivan(args);
    let seq: string;
    let updateSeq: string;
    try {
      assert.equal((await request(first.url, '/db', { method: 'PUT', auth })).status, 201);
      for (const id of ['a', 'b']) await request(first.url, `/db/${id}`, { method: 'PUT', auth, body: {} });
      seq = (await request(first.url, '/db/_changes', { auth })).body.last_seq;
      updateSeq = (await request(first.url, '/db', { auth })).body.update_seq;
      assert.equal(seqNumber(seq), 2);
    } finally {
      assert.equal(await first.stop('SIGTERM'), 0);
    }
    const second = await startDivan(args);
    try {
      assert.equal((await request(second.url, '/db', { auth })).body.update_seq, updateSeq, 'the same sequence text after the restart');
      await request(second.url, '/db/c', { method: 'PUT', auth, body: {} });
      const resumed = await request(second.url, `/db/_changes?since=${encodeURIComponent(seq)}`, { auth });
      assert.equal(resumed.status, 200);
      assert.deepEqual(resumed.body.results.map((row: { id: string }) => row.id), ['c']);
      assert.equal(seqNumber(resumed.body.last_seq), 3);
    } finally {
      assert.equal(await second.stop('SIGTERM'), 0);
    }
  } finally {
    remove();
  }
});
