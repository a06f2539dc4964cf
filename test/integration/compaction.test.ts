/**
 * Issue 23 against the real binary: an older revision stays readable by `?rev=` until
 * `POST /{db}/_compact` (202) reclaims it; the leaf survives, and a restart keeps both facts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { request } from '../support/http.js';
import { startDivan } from '../support/process.js';

test('the real binary serves an old revision by ?rev= until POST /{db}/_compact answers 202 and reclaims it', async () => {
  const data = mkdtempSync(join(tmpdir(), 'divan-bin-'));
  const config = join(data, 'admin.ini');
  writeFileSync(config, '[admins]\nboss = b0ss-pass\n');
  const auth: [string, string] = ['boss', 'b0ss-pass'];
  let divan = await startDivan(['--port', '0', '--data', data, '--config', config]);
  try {
    await request(divan.url, '/db', { method: 'PUT', auth });
    const first = await request(divan.url, '/db/doc', { method: 'PUT', auth, body: { version: 'first' } });
    await request(divan.url, '/db/doc', { method: 'PUT', auth, body: { _rev: first.body.rev, version: 'second' } });
    assert.equal(await divan.stop('SIGTERM'), 0);
    divan = await startDivan(['--port', '0', '--data', data, '--config', config]);
    const old = await request(divan.url, `/db/doc?rev=${first.body.rev}`, { auth });
    assert.deepEqual([old.status, old.body.version], [200, 'first'], 'kept across a restart');
    const compact = await request(divan.url, '/db/_compact', { method: 'POST', auth, body: {} });
    assert.deepEqual([compact.status, compact.body], [202, { ok: true }]);
    while ((await request(divan.url, '/db', { auth })).body.compact_running) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal((await request(divan.url, `/db/doc?rev=${first.body.rev}`, { auth })).status, 404);
    assert.equal((await request(divan.url, '/db/doc', { auth })).body.version, 'second');
  } finally {
    assert.equal(await divan.stop('SIGTERM'), 0);
    rmSync(data, { recursive: true, force: true });
  }
});
