/**
 * Issue 23, sequences, against the real binary: a sequence given out (CouchDB 3's `N-<opaque>`)
 * resumes `_changes` at the same place after the server restarts on the same SQLite data.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { request } from '../support/http.js';
import { startDivan } from '../support/process.js';
import { seqNumber } from '../support/sequences.js';

test('the real binary resumes _changes from an N-<opaque> sequence it gave out before a restart (SQLite)', async () => {
  const data = mkdtempSync(join(tmpdir(), 'divan-seqs-'));
  const config = join(data, 'admin.ini');
  writeFileSync(config, '[admins]\nboss = b0ss-pass\n');
  const auth: [string, string] = ['boss', 'b0ss-pass'];
  const args = ['--port', '0', '--data', data, '--config', config];
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
    rmSync(data, { recursive: true, force: true });
  }
});
