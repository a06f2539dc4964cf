// Security issue 14, items 2 and 3, against the real binary: a `$regex` ReDoS no longer freezes the
// server, and a cross-site text/plain form can no longer write with an admin's cookie.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request, type HttpResponse } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

const AUTH: [string, string] = ['boss', 'b0ss-pass'];

/** The response, or undefined when none came within `ms` (the server is frozen). */
async function within(ms: number, pending: Promise<HttpResponse>): Promise<HttpResponse | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([pending, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** One binary per item, so that a server frozen by one attack cannot fail the other's test. */
function withBinary(): { divan: () => RunningDivan } {
  let data: string;
  let divan: RunningDivan;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'divan-input-'));
    divan = await startDivan(['--port', '0', '--data', data], { COUCHDB_USER: AUTH[0], COUCHDB_PASSWORD: AUTH[1] });
  });
  after(async () => {
    // SIGKILL: on a server frozen by the ReDoS a graceful stop would wait for ever.
    await divan.stop('SIGKILL');
    rmSync(data, { recursive: true, force: true });
  });
  return { divan: () => divan };
}

describe('the real binary: issue 14 item 2 ($regex ReDoS)', () => {
  const binary = withBinary();

  test('item 2: _changes?filter=_selector with {"$regex":"^(a+)+$"} over a long value does not hold the server', async () => {
    const divan = binary.divan();
    assert.equal((await request(divan.url, '/redos', { method: 'PUT', auth: AUTH })).status, 201);
    // 64 a's: 2^64 backtracking steps for the old engine (28 held it 2.5 s), microseconds for RE2.
    assert.equal((await request(divan.url, '/redos/victim', { method: 'PUT', auth: AUTH, body: { v: `${'a'.repeat(64)}!` } })).status, 201);
    const attack = request(divan.url, '/redos/_changes?filter=_selector', { method: 'POST', auth: AUTH, body: { selector: { v: { $regex: '^(a+)+$' } } } });
    attack.catch(() => undefined);
    const up = await within(5000, request(divan.url, '/_up'));
    assert.equal(up?.status, 200, 'GET /_up answered while the selector ran');
    const answer = await within(20_000, attack);
    assert.equal(answer?.status, 200, 'the selector feed answered');
    assert.deepEqual(answer?.body.results, []);
  });
});

describe('the real binary: issue 14 item 3 (CSRF through text/plain forms)', () => {
  const binary = withBinary();

  test('item 3: a cross-site text/plain form with an admin cookie creates neither a design document nor a user', async () => {
    const divan = binary.divan();
    const login = await request(divan.url, '/_session', {
      method: 'POST',
      body: `name=${AUTH[0]}&password=${AUTH[1]}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(login.status, 200, login.text);
    const cookie = String(login.headers['set-cookie']?.[0]).split(';')[0]!;
    assert.equal((await request(divan.url, '/app', { method: 'PUT', auth: AUTH })).status, 201);
    // <form method=POST enctype=text/plain action=/app><input name='{"_id":"_design/x","a":"' value='"}'>
    const designDoc = await request(divan.url, '/app', { method: 'POST', body: '{"_id":"_design/x","a":"="}', headers: { Cookie: cookie, 'Content-Type': 'text/plain' } });
    assert.equal(designDoc.status, 415, designDoc.text);
    assert.deepEqual(designDoc.body, { error: 'bad_content_type', reason: 'Content-Type must be application/json' });
    const user = await request(divan.url, '/_users', {
      method: 'POST',
      body: '{"_id":"org.couchdb.user:mallory","name":"mallory","type":"user","roles":[],"password":"p","x":"="}',
      headers: { Cookie: cookie, 'Content-Type': 'text/plain' },
    });
    assert.equal(user.status, 415, user.text);
    assert.equal((await request(divan.url, '/app/_design/x', { auth: AUTH })).status, 404);
    assert.equal((await request(divan.url, '/_users/org.couchdb.user:mallory', { auth: AUTH })).status, 404);
    const json = await request(divan.url, '/app', { method: 'POST', body: { _id: '_design/x' }, headers: { Cookie: cookie } });
    assert.equal(json.status, 201, 'the same write as application/json goes through');
  });
});
