/**
 * Issue 23 against the real binary: revision ids that are not hex (PouchDB's `2-x`, `1-`,
 * `3-totally_fake_rev`), `_revisions` deciding over `_rev`, and `_replication_*` members.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request } from '../support/http.js';
import { startDivan } from '../support/process.js';

describe('the real binary and revision ids as CouchDB takes them', () => {
  const data = mkdtempSync(join(tmpdir(), 'divan-revids-'));
  const auth: [string, string] = ['boss', 'b0ss-pass'];
  let divan: Awaited<ReturnType<typeof startDivan>>;
  const call = (path: string, options: { method?: string; body?: unknown } = {}) => request(divan.url, path, { ...options, auth });
  before(async () => {
    const config = join(data, 'admin.ini');
    writeFileSync(config, '[admins]\nboss = b0ss-pass\n');
    divan = await startDivan(['--port', '0', '--data', data, '--config', config]);
    assert.equal((await call('/db', { method: 'PUT' })).status, 201);
  });
  after(async () => {
    assert.equal(await divan.stop('SIGTERM'), 0);
    rmSync(data, { recursive: true, force: true });
  });

  test('new_edits:false stores 2-x and 1-; a fake 3-totally_fake_rev is a 409 row while the other document is written', async () => {
    const replicated = await call('/db/_bulk_docs', {
      method: 'POST',
      body: { new_edits: false, docs: [{ _id: 'a', _rev: '2-x', _revisions: { start: 2, ids: ['x', 'some'] } }, { _id: 'b', _rev: '1-' }] },
    });
    assert.deepEqual([replicated.status, replicated.body], [201, []]);
    assert.equal((await call('/db/a')).body._rev, '2-x');
    assert.equal((await call('/db/b?rev=1-')).body._rev, '1-');
    assert.equal((await call('/db/a?rev=2-g')).status, 404);
    const edits = await call('/db/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'a', _rev: '3-totally_fake_rev' }, { _id: 'c' }] } });
    assert.equal(edits.status, 201);
    assert.deepEqual(edits.body[0], { id: 'a', error: 'conflict', reason: 'Document update conflict.' });
    assert.equal(edits.body[1].ok, true);
  });

  test('_revisions decides where it and _rev disagree', async () => {
    const put = await call('/db/d?new_edits=false', { method: 'PUT', body: { _rev: '1-zzz', _revisions: { start: 2, ids: ['b', 'a'] } } });
    assert.equal(put.status, 201);
    assert.equal((await call('/db/d')).body._rev, '2-b');
  });

  test('_replication_id and _replication_state are kept on an ordinary document', async () => {
    const post = await call('/db', { method: 'POST', body: { _replication_id: 'test', _replication_state: 'triggered' } });
    assert.equal(post.status, 201);
    const doc = await call(`/db/${post.body.id}`);
    assert.deepEqual([doc.body._replication_id, doc.body._replication_state], ['test', 'triggered']);
  });
});
