/**
 * Security issue 14, item 1, against the real binary: one `_bulk_docs` with `new_edits:false` and
 * 4000 conflicting revisions of one id (a 275 KB body) used to hold the event loop for about 30 s.
 * Now the document keeps at most `[couchdb] max_document_leaves` (1000) leaves and each revision
 * beyond is answered with a `too_large` row.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { request } from '../support/http.js';
import { startDivan } from '../support/process.js';

test('the real binary keeps 1000 of 4000 conflicting replicated revisions of one id and refuses the rest with too_large', async () => {
  const data = mkdtempSync(join(tmpdir(), 'divan-bin-'));
  const config = join(data, 'admin.ini');
  writeFileSync(config, '[admins]\nboss = b0ss-pass\n');
  const auth: [string, string] = ['boss', 'b0ss-pass'];
  const divan = await startDivan(['--port', '0', '--data', data, '--config', config]);
  try {
    assert.equal((await request(divan.url, '/db', { method: 'PUT', auth })).status, 201);
    const docs = Array.from({ length: 4000 }, (_, i) => ({ _id: 'x', _rev: `1-${i.toString(16).padStart(32, '0')}`, v: i }));
    const res = await request(divan.url, '/db/_bulk_docs', { method: 'POST', auth, body: { new_edits: false, docs } });
    assert.equal(res.status, 201);
    assert.equal(res.body.length, 3000);
    assert.ok(res.body.every((row: { id: string; error: string }) => row.id === 'x' && row.error === 'too_large'));
    const doc = await request(divan.url, '/db/x?conflicts=true', { auth });
    assert.equal(doc.body._conflicts.length, 999);
    assert.equal((await request(divan.url, '/_up')).status, 200);
  } finally {
    assert.equal(await divan.stop('SIGTERM'), 0);
    rmSync(data, { recursive: true, force: true });
  }
});
