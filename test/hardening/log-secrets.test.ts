/**
 * No password, secret, token, cookie or derived key in any log line. One server runs at
 * `[log] level = debug` with every handler on, and goes through every path that touches a secret:
 * the environment's admin and secret, user creation and password changes, Basic and /_session
 * logins right and wrong (until lockout), TOTP codes, cookies genuine, tampered and malformed,
 * JWTs genuine, forged and expired, a JWT key that cannot be used, proxy tokens, and `_config`
 * writes of an admin password and of the cookie secret. Then every captured line is searched for
 * every secret value the test used or the server derived.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { basicValue, raw, type RawResponse } from '../support/hardening.js';
import { startServer, type TestServer } from '../support/server.js';

const SECRETS = {
  envAdminPassword: 'env-admin-pw-7f3a9c',
  envSecret: 'env-cookie-secret-5b1e0d44',
  userPassword: 'user-pw-91c2e8aa',
  newUserPassword: 'user-pw-new-0d7e1f3b',
  wrongPassword: 'guess-pw-4e8d2c1a',
  configAdminPassword: 'config-admin-pw-6a0f9b',
  rotatedSecret: 'rotated-secret-3c7d1e92',
  jwtKey: Buffer.from('jwt hmac key, exactly 32 bytes!!'),
  totpKey: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ',
  badPemBody: 'TUlJQmRhbmdlcm91c2x5LXNlY3JldC1sb29raW5nLWJsb2I',
};
const HANDLERS = ['cookie', 'proxy', 'jwt', 'default'].map((name) => `{chttpd_auth, ${name}_authentication_handler}`).join(', ');

describe('no secret in any log line (server at [log] level = debug)', () => {
  let server: TestServer;
  let port: number;
  /** Every secret value seen or used, with what it is. */
  const needles = new Map<string, string>();
  const remember = (what: string, value: string | undefined): void => {
    if (value !== undefined && value.length >= 6) needles.set(value, what);
  };
  const cookiesOf = (res: RawResponse): string[] =>
    (res.headers.get('set-cookie') ?? []).map((header) => header.split(';')[0]!.slice('AuthSession='.length)).filter((value) => value !== '');

  before(async () => {
    server = await startServer({
      env: { COUCHDB_USER: 'envadmin', COUCHDB_PASSWORD: SECRETS.envAdminPassword, COUCHDB_SECRET: SECRETS.envSecret },
      ini: [
        '[log]', 'level = debug',
        '[chttpd]', `authentication_handlers = ${HANDLERS}`,
        '[chttpd_auth]', 'iterations = 1000', 'proxy_use_secret = true',
        '[chttpd_auth_lockout]', 'threshold = 3',
        '[jwt_keys]', `hmac:_default = ${SECRETS.jwtKey.toString('base64')}`,
      ].join('\n'),
    });
    port = Number(new URL(server.url).port);
    for (const [what, value] of Object.entries(SECRETS)) remember(what, Buffer.isBuffer(value) ? value.toString('base64') : value);
    remember('JWT key (hex)', SECRETS.jwtKey.toString('hex'));
    remember('JWT key (text)', SECRETS.jwtKey.toString('utf8'));
  });

  after(async () => server.close());

  const json = (method: string, target: string, body: unknown, headers: [string, string][] = []) =>
    raw(port, { method, target, headers: [['Content-Type', 'application/json'], ...headers], body: JSON.stringify(body) });
  const asAdmin = (): [string, string] => ['Authorization', basicValue('envadmin', SECRETS.envAdminPassword)];

  test('exercise every path that handles a secret', async () => {
    // Users, one with a second factor; a password change.
    for (const [name, extra] of [['ana', {}], ['tom', { totp: { key: SECRETS.totpKey } }]] as const) {
      const res = await json('PUT', `/_users/org.couchdb.user:${name}`, { name, password: SECRETS.userPassword, roles: [], type: 'user', ...extra }, [asAdmin()]);
      assert.equal(res.status, 201, res.text);
    }
    // Logins, right and wrong, Basic and /_session (JSON and form), until the lockout answers.
    for (let i = 0; i < 5; i++) {
      await raw(port, { target: '/_session', headers: [['Authorization', basicValue('ana', `${SECRETS.wrongPassword}${i}`)]] });
      remember(`wrong password ${i}`, `${SECRETS.wrongPassword}${i}`);
    }
    await json('POST', '/_session?fail=/x', { name: 'ana', password: SECRETS.wrongPassword });
    await raw(port, { method: 'POST', target: '/_session', headers: [['Content-Type', 'application/x-www-form-urlencoded'], ['X-Forwarded-For', '10.0.0.9']], body: `name=ana&password=${SECRETS.userPassword}` });
    const login = await json('POST', '/_session?next=/app', { name: 'ana', password: SECRETS.userPassword }, [['X-Forwarded-For', '10.0.0.8']]);
    assert.equal(login.status, 302);
    const [anaCookie] = cookiesOf(login);
    assert.ok(anaCookie);
    remember('ana cookie', anaCookie);
    // TOTP: wrong and right codes.
    const code = (step: number): string => {
      const message = Buffer.alloc(8);
      message.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30000) + step));
      const mac = createHmac('sha1', Buffer.from('12345678901234567890')).update(message).digest();
      return String((mac.readUInt32BE(mac[mac.length - 1]! & 0xf) & 0x7fffffff) % 1e6).padStart(6, '0');
    };
    remember('TOTP code', code(0));
    await json('POST', '/_session', { name: 'tom', password: SECRETS.userPassword, token: '999999' === code(0) ? '999998' : '999999' }, [['X-Forwarded-For', '10.0.0.7']]);
    const tom = await json('POST', '/_session', { name: 'tom', password: SECRETS.userPassword, token: code(0) }, [['X-Forwarded-For', '10.0.0.6']]);
    assert.equal(tom.status, 200, tom.text);
    for (const value of cookiesOf(tom)) remember('tom cookie', value);
    // Cookies: genuine, tampered, malformed; a Basic response hands one out too.
    await raw(port, { target: '/_session', headers: [['Cookie', `AuthSession=${anaCookie}`]] });
    const tampered = `${anaCookie!.slice(0, -2)}AA`;
    remember('tampered cookie', tampered);
    await raw(port, { target: '/_all_dbs', headers: [['Cookie', `AuthSession=${tampered}`]] });
    await raw(port, { target: '/_session', headers: [['Cookie', 'AuthSession=!!malformed-cookie-value!!']] });
    remember('malformed cookie', '!!malformed-cookie-value!!');
    const basic = await raw(port, { target: '/_session', headers: [['Authorization', basicValue('ana', SECRETS.userPassword)], ['X-Forwarded-For', '10.0.0.5']] });
    for (const value of cookiesOf(basic)) remember('Basic cookie', value);
    remember('Basic header', basicValue('ana', SECRETS.userPassword).slice(6));
    await raw(port, { target: '/_session', headers: [['Authorization', `Basic ${SECRETS.wrongPassword}!!`]] });
    // JWTs: genuine, forged, expired, malformed.
    const b64 = (text: string): string => Buffer.from(text).toString('base64url');
    const jwt = (claims: object, key: Buffer): string => {
      const input = `${b64('{"alg":"HS256"}')}.${b64(JSON.stringify(claims))}`;
      return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
    };
    const now = Math.floor(Date.now() / 1000);
    for (const [what, token] of [
      ['genuine JWT', jwt({ sub: 'jwt-user', exp: now + 600 }, SECRETS.jwtKey)],
      ['forged JWT', jwt({ sub: 'jwt-user', exp: now + 600 }, Buffer.from('another key'))],
      ['expired JWT', jwt({ sub: 'jwt-user', exp: now - 600 }, SECRETS.jwtKey)],
      ['malformed JWT', 'not.a-jwt-secretish-value.at-all'],
    ] as const) {
      remember(what, token);
      remember(`${what} signature`, token.split('.')[2]);
      await raw(port, { target: '/_session', headers: [['Authorization', `Bearer ${token}`]] });
    }
    // A JWT key that cannot be used: its name is logged, never its value.
    const pem = `-----BEGIN PUBLIC KEY-----\\n${SECRETS.badPemBody}\\n-----END PUBLIC KEY-----`;
    assert.equal((await json('PUT', '/_node/_local/_config/jwt_keys/rsa:broken', pem, [asAdmin()])).status, 200);
    const kid = `${b64('{"alg":"RS256","kid":"broken"}')}.${b64(JSON.stringify({ sub: 'x', exp: now + 60 }))}.c2ln`;
    await raw(port, { target: '/_session', headers: [['Authorization', `Bearer ${kid}`]] });
    // Proxy tokens, right and wrong.
    const secret = server.app.config.authString('secret', '');
    assert.equal(secret, SECRETS.envSecret);
    const proxyToken = createHmac('sha256', secret).update('proxied').digest('hex');
    remember('proxy token', proxyToken);
    await raw(port, { target: '/_session', headers: [['X-Auth-CouchDB-UserName', 'proxied'], ['X-Auth-CouchDB-Token', proxyToken]] });
    await raw(port, { target: '/_session', headers: [['X-Auth-CouchDB-UserName', 'proxied'], ['X-Auth-CouchDB-Token', `${proxyToken.slice(0, -4)}beef`]] });
    remember('wrong proxy token', `${proxyToken.slice(0, -4)}beef`);
    // _config: an admin password in plaintext (hashed by the server), a rotated cookie secret.
    assert.equal((await json('PUT', '/_node/_local/_config/admins/cfgadmin', SECRETS.configAdminPassword, [asAdmin()])).status, 200);
    await server.app.services.admins.settled();
    assert.equal((await raw(port, { target: '/_session', headers: [['Authorization', basicValue('cfgadmin', SECRETS.configAdminPassword)]] })).status, 200);
    assert.equal((await json('PUT', '/_node/_local/_config/chttpd_auth/secret', SECRETS.rotatedSecret, [asAdmin()])).status, 200);
    // A password change by the owner, with her cookie.
    const doc = (await raw(port, { target: '/_users/org.couchdb.user:ana', headers: [['Cookie', `AuthSession=${anaCookie}`]] })).json;
    const changed = await json('PUT', '/_users/org.couchdb.user:ana', { ...doc, password: SECRETS.newUserPassword }, [['Cookie', `AuthSession=${anaCookie}`]]);
    assert.equal(changed.status, 201, changed.text);
    // What the server derived: stored hashes of users and admins, and the current secret.
    for (const name of ['ana', 'tom']) {
      const stored = (await raw(port, { target: `/_users/org.couchdb.user:${name}`, headers: [asAdmin()] })).json;
      remember(`${name} derived_key`, stored.derived_key);
    }
    for (const name of ['envadmin', 'cfgadmin', 'root']) {
      const hash = server.app.config.get('admins', name) ?? '';
      remember(`[admins] ${name} derived key`, /^-pbkdf2(?::\w+)?-([0-9a-f]+),/.exec(hash)?.[1]);
    }
    remember('cookie secret in force', server.app.config.authString('secret', ''));
  });

  test('the log has lines for all of it, and none holds a secret', (t) => {
    const lines = server.logs;
    t.diagnostic(`${lines.length} log lines searched for ${needles.size} secret values`);
    assert.ok(lines.length > 30, `${lines.length} log lines captured`);
    assert.ok(lines.some((line) => line.includes('failed to authenticate as "ana"')), 'failures are logged (by name)');
    assert.ok(lines.some((line) => line.includes('[jwt_keys] rsa:broken is not usable')), 'the unusable key is logged (by name)');
    assert.ok(lines.some((line) => line.startsWith('[info]')), 'access lines are logged');
    assert.ok(needles.size >= 25, `${needles.size} secret values checked`);
    const leaks: string[] = [];
    for (const line of lines) {
      for (const [needle, what] of needles) if (line.includes(needle)) leaks.push(`${what} in: ${line.trim()}`);
    }
    assert.deepEqual(leaks, []);
  });
});
