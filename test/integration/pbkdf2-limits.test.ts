import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { statusCounts } from '../support/concurrent-guesses.js';
import { request } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

const ADMIN: [string, string] = ['boss', 'b0ss-pass'];

/** Security issue 14, item 8, against the compiled binary with its default settings. */
describe('the real binary: PBKDF2 work is bounded', () => {
  let data: string;
  let divan: RunningDivan;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'divan-pbkdf2-'));
    divan = await startDivan(['--port', '0', '--data', data], { COUCHDB_USER: ADMIN[0], COUCHDB_PASSWORD: ADMIN[1] });
    for (const name of ['mal', 'crowd']) {
      const created = await request(divan.url, `/_users/org.couchdb.user:${name}`, {
        method: 'PUT',
        auth: ADMIN,
        body: { name, password: `${name}-pass`, roles: [], type: 'user' },
      });
      assert.equal(created.status, 201, created.text);
    }
  });
  after(async () => {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
  });

  test('a user cannot give their own hash 1e9 iterations: 403 Iteration count is too high for this server', async () => {
    const path = '/_users/org.couchdb.user:mal';
    const doc = (await request(divan.url, path, { auth: ['mal', 'mal-pass'] })).body;
    const res = await request(divan.url, path, {
      method: 'PUT',
      auth: ['mal', 'mal-pass'],
      body: { ...doc, salt: 'a'.repeat(32), derived_key: 'b'.repeat(64), iterations: 1000000000 },
    });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 403, body: { error: 'forbidden', reason: 'Iteration count is too high for this server' } });
    assert.equal((await request(divan.url, path, { auth: ['mal', 'mal-pass'] })).body._rev, doc._rev, 'nothing was stored');
  });

  test('60 cold logins at once: 2 run, 32 wait, the rest get 503 service_unavailable with Retry-After at once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => request(divan.url, '/_session', { auth: ['crowd', `guess-${i}`], headers: { 'X-Forwarded-For': `198.51.100.${i}` } })),
    );
    const counts = statusCounts(answers);
    assert.deepEqual(Object.keys(counts).sort(), ['401', '503'], JSON.stringify(counts));
    assert.ok(counts[503]! >= 20, JSON.stringify(counts));
    const refused = answers.find((res) => res.status === 503)!;
    assert.deepEqual(refused.body, { error: 'service_unavailable', reason: 'Too many password checks are waiting. Try again shortly.' });
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal((await request(divan.url, '/_session', { auth: ['crowd', 'crowd-pass'] })).status, 200, 'once the flood has passed');
  });
});
