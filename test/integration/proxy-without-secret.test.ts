import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

const CHAIN = '{chttpd_auth, proxy_authentication_handler}, {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}';
const CLAIMS_ADMIN = { 'X-Auth-CouchDB-UserName': 'mallory', 'X-Auth-CouchDB-Roles': '_admin' };

/** Security issue 14, item 10, against the compiled binary. */
describe('the real binary: proxy_use_secret = true before any secret exists', () => {
  let data: string;
  let divan: RunningDivan;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'divan-proxy-'));
    const ini = join(data, 'proxy.ini');
    writeFileSync(ini, `[chttpd]\nauthentication_handlers = ${CHAIN}\n[chttpd_auth]\nproxy_use_secret = true\n[admins]\nboss = b0ss-pass\n`);
    divan = await startDivan(['--port', '0', '--data', data, '--config', ini]);
  });
  after(async () => {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
  });

  test('headers claiming _admin are refused until a secret exists; the refusal is logged once', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await request(divan.url, '/_all_dbs', { headers: CLAIMS_ADMIN });
      assert.deepEqual({ status: res.status, body: res.body }, { status: 401, body: { error: 'unauthorized', reason: 'You are not a server admin.' } });
    }
    const session = await request(divan.url, '/_session', { headers: CLAIMS_ADMIN });
    assert.deepEqual(session.body.userCtx, { name: null, roles: [] });
    assert.equal(divan.stderr().split('\n').filter((line) => line.includes('proxy authentication refused')).length, 1, divan.stderr());
  });

  test('after the first login generates the secret, a token signed with it authenticates', async () => {
    const login = await request(divan.url, '/_session', { method: 'POST', body: { name: 'boss', password: 'b0ss-pass' } });
    assert.equal(login.status, 200);
    const secret = /^secret = ([0-9a-f]{32})$/m.exec(readFileSync(join(data, 'proxy.ini'), 'utf8'))?.[1];
    assert.ok(secret, 'the generated secret is persisted');
    const token = createHmac('sha256', secret).update('mallory').digest('hex');
    const signed = await request(divan.url, '/_all_dbs', { headers: { ...CLAIMS_ADMIN, 'X-Auth-CouchDB-Token': token } });
    assert.equal(signed.status, 200);
    assert.equal((await request(divan.url, '/_all_dbs', { headers: CLAIMS_ADMIN })).status, 401, 'still refused without the token');
  });
});
