import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { statusCounts, wrongGuessesThenRight } from '../support/concurrent-guesses.js';
import { request } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

const ADMIN: [string, string] = ['boss', 'b0ss-pass'];
const LOCKED = { error: 'forbidden', reason: 'Account is temporarily locked due to multiple authentication failures' };

/** Security issue 14, item 7, against the compiled binary with its default settings. */
describe('the real binary: lockout cannot be bypassed by sending guesses at once', () => {
  let data: string;
  let divan: RunningDivan;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'divan-lockout-'));
    divan = await startDivan(['--port', '0', '--data', data], { COUCHDB_USER: ADMIN[0], COUCHDB_PASSWORD: ADMIN[1] });
    const created = await request(divan.url, '/_users/org.couchdb.user:victim', {
      method: 'PUT',
      auth: ADMIN,
      body: { name: 'victim', password: 'victim-pass', roles: [], type: 'user' },
    });
    assert.equal(created.status, 201, created.text);
  });
  after(async () => {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
  });

  test('19 wrong Basic passwords at once, then the right one while they are checked: the right one is refused with the lockout 403', async () => {
    const { wrong, right } = await wrongGuessesThenRight((password) => request(divan.url, '/_session', { auth: ['victim', password] }), 'victim-pass');
    assert.deepEqual({ status: right.status, body: right.body }, { status: 403, body: LOCKED });
    assert.deepEqual(statusCounts(wrong), { 401: 5, 403: 14 }, 'only the threshold of guesses is ever checked');
  });

  test('one after another nothing changed: 5 wrong /_session logins → 401 each, the right password then → 403', async () => {
    const login = (password: string) =>
      request(divan.url, '/_session', { method: 'POST', body: { name: 'victim', password }, headers: { 'X-Forwarded-For': '192.0.2.7' } });
    for (let i = 1; i <= 5; i++) assert.equal((await login(`wrong-${i}`)).status, 401, `failure ${i}`);
    assert.deepEqual((await login('victim-pass')).body, LOCKED);
    const elsewhere = await request(divan.url, '/_session', { method: 'POST', body: { name: 'victim', password: 'victim-pass' }, headers: { 'X-Forwarded-For': '192.0.2.8' } });
    assert.equal(elsewhere.status, 200, 'another client address is not locked');
  });
});
