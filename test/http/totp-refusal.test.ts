import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

describe('users with a TOTP secret', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: '[chttpd_auth]\niterations = 1000\n[chttpd_auth_lockout]\nmode = off\n' });
    const put = await server.admin('/_users/org.couchdb.user:otp', {
      method: 'PUT',
      body: { name: 'otp', password: 'otp-pass', roles: [], type: 'user', totp: { key: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' } },
    });
    assert.equal(put.status, 201, put.text);
  });
  after(async () => server.close());

  test('R-BASIC-1: Basic authentication of a TOTP user is always 401, even with the right password', async () => {
    const res = await server.request('/_session', { auth: ['otp', 'otp-pass'] });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized', reason: 'Name or password is incorrect.' });
  });

  test('R-POST-4: a password alone does not log a TOTP user in', async () => {
    const res = await server.request('/_session', { method: 'POST', body: { name: 'otp', password: 'otp-pass' } });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized', reason: 'Name or password is incorrect.' });
    assert.match(String(res.headers['set-cookie']), /^AuthSession=;/);
  });
});
