/**
 * Attacks, one test each, for the cases no other test file already pins down. The others are
 * listed in docs/security.md with the test that covers them (alg none, HS256 signed with the RSA
 * public key, tampered JWTs, duplicate keys in user documents, lockout by case or spaces, a cookie
 * after a password change by an admin, …); the property tests in this folder cover the same ground
 * with generated cases.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { assertNoUnexpectedErrors } from '../support/hardening.js';
import { ADMIN, startServer, type TestServer } from '../support/server.js';
import { handMadeCookie, hexTime } from '../support/session-helpers.js';
import {
  FAST_INI,
  authSessionOf,
  basicHeader,
  createUser,
  forbidden,
  loginCookie,
  readUser,
  userPath,
  whoAmI,
} from '../support/users-helpers.js';

const nowSeconds = (): number => Math.floor(Date.now() / 1000);
const setCookies = (headers: Record<string, unknown>): string[] => [headers['set-cookie'] ?? []].flat() as string[];

describe('attacks', () => {
  let server: TestServer;
  let secret: string;
  let bobSalt: string;

  before(async () => {
    // Lockout off: the redirect tests fail many logins on purpose; the lockout test turns it on.
    server = await startServer({ ini: `${FAST_INI}[chttpd_auth_lockout]\nmode = off\n` });
    await createUser(server, 'bob', 'bob-pass', ['staff']);
    bobSalt = (await readUser(server, 'bob'))!['salt'];
    await loginCookie(server, 'bob', 'bob-pass');
    secret = server.app.config.authString('secret', '');
    assert.match(secret, /^[0-9a-f]{32}$/, 'the first login generated the secret');
  });

  after(async () => {
    assertNoUnexpectedErrors(server.logs);
    await server.close();
  });

  async function login(query: string, password = 'bob-pass', headers: Record<string, string> = {}) {
    return server.request(`/_session${query}`, { method: 'POST', body: { name: 'bob', password }, headers });
  }

  test('next/fail that would leave the origin, in every encoding: 400, no cookie, no Location', async () => {
    // The query string is percent-decoded once, so each raw form below is what the browser sent.
    const raw = [
      '%2F%2Fevil.example', '%2F%5Cevil.example', '/%5Cevil.example', '/%5C/evil.example', '%5C%5Cevil.example',
      '/%09/evil.example', '/%0A/evil.example', '/%0D/evil.example', '%2F%09%2Fevil.example', '%20//evil.example',
      'http://evil.example/', 'https:%2F%2Fevil.example', 'HTTP://evil.example', '//evil.example@origin', 'javascript:alert(1)',
      'evil.example', '%68ttp://evil.example', '\\\\evil.example',
    ];
    for (const query of raw) {
      for (const [param, password] of [['next', 'bob-pass'], ['fail', 'wrong']] as const) {
        const res = await login(`?${param}=${query}`, password);
        assert.equal(res.status, 400, `${param}=${query}: ${res.status} ${res.text}`);
        assert.equal(res.headers['location'], undefined, `${param}=${query}`);
        assert.ok(!setCookies(res.headers).some((c) => /^AuthSession=[^;]+/.test(c)), `${param}=${query}: no session cookie`);
      }
    }
    const logout = await server.request('/_session?next=%2F%5Cevil.example', { method: 'DELETE' });
    assert.equal(logout.status, 400);
  });

  test('paths that only look like other origins stay on this one: double-encoding and Unicode slashes', async () => {
    for (const query of ['%252F%252Fevil.example', '/%252F%252Fevil.example', '/%E2%88%95%E2%88%95evil', '/%EF%BC%8F%EF%BC%8Fevil', '/@evil.example', '/.%2F%2Fevil.example']) {
      const res = await login(`?next=${query}`);
      if (res.status === 400) continue;
      assert.equal(res.status, 302, `${query}: ${res.text}`);
      const location = String(res.headers['location']);
      assert.equal(new URL(location).origin, new URL(server.url).origin, `${query} → ${location}`);
      assert.match(location, /^http:\/\/[\x21-\x7e]+$/);
    }
  });

  test('CRLF injection into Location or Set-Cookie: line breaks in next/fail, in user names, in cookie settings', async () => {
    for (const query of ['/x%0D%0ASet-Cookie:%20AuthSession=evil', '/x%0ASet-Cookie:%20a=b', '/x%0D%0A%0D%0A<html>', '/x%E2%80%A8y', '/x%C2%85y', '/x%250D%250Aa=b']) {
      const res = await login(`?next=${query}`);
      const cookies = setCookies(res.headers);
      assert.ok(cookies.every((cookie) => !cookie.includes('evil') && !cookie.startsWith('a=')), `${query}: ${cookies.join(' | ')}`);
      const location = res.headers['location'];
      if (location !== undefined) assert.match(String(location), /^http:\/\/[\x21-\x7e]+$/, query);
      else assert.equal(res.status, 400, query);
    }
    // A user whose name carries cookie syntax still gets one opaque base64url value.
    const name = 'mallory; Domain=evil.example, x=y';
    await createUser(server, name, 'm-pass');
    const cookie = await loginCookie(server, name, 'm-pass');
    assert.match(cookie, /^AuthSession=[A-Za-z0-9_-]+$/);
    // Cookie settings cannot smuggle attributes or lines: refused, or left out of the header.
    for (const [key, value] of [['cookie_domain', 'evil.example; HttpOnly=false'], ['cookie_domain', 'a.example\r\nSet-Cookie: x=y'], ['same_site', 'None; Domain=evil.example'], ['cookie_domain', 'a.example, b=c']]) {
      const put = await server.admin(`/_node/_local/_config/chttpd_auth/${key}`, { method: 'PUT', body: JSON.stringify(value) });
      const res = await login('');
      assert.equal(res.status, 200);
      for (const header of setCookies(res.headers)) {
        assert.match(header, /^AuthSession=[A-Za-z0-9_-]+; Version=1; Expires=[^;]+; Max-Age=\d+; Path=\/; HttpOnly$/, `${key}=${JSON.stringify(value)} (PUT ${put.status}): ${header}`);
      }
      if (put.status === 200) await server.admin(`/_node/_local/_config/chttpd_auth/${key}`, { method: 'DELETE' });
    }
    // A header the client asks to have echoed cannot carry a line break (Node refuses it on input).
    const echoed = await server.request('/_all_dbs', { headers: { 'X-CouchDB-WWW-Authenticate': 'Cookie, realm="x"' } });
    assert.equal(echoed.status, 401);
    assert.equal(echoed.headers['www-authenticate'], 'Cookie, realm="x"', 'echoed as one header line');
  });

  test('cookie MAC truncation: every shorter MAC is anonymous, never accepted, never a 500', async () => {
    const genuine = handMadeCookie('bob', hexTime(nowSeconds()), secret, bobSalt);
    const bytes = Buffer.from(genuine, 'base64url');
    const macStart = bytes.length - 32;
    for (let keep = 0; keep < 32; keep++) {
      const value = bytes.subarray(0, macStart + keep).toString('base64url');
      const res = await whoAmI(server, { cookie: `AuthSession=${value}` });
      if (value.length % 4 === 1) {
        assert.equal(res.status, 400, `MAC of ${keep} bytes (4n+1 characters)`);
        assert.equal(res.body.error, 'bad_request');
      } else {
        assert.equal(res.status, 200, `MAC of ${keep} bytes`);
        assert.equal(res.body.userCtx.name, null, `MAC of ${keep} bytes is anonymous`);
      }
    }
    assert.equal((await whoAmI(server, { cookie: `AuthSession=${genuine}` })).body.userCtx.name, 'bob', 'the control');
  });

  test('cookie MAC forgery: MACs over the wrong key material never authenticate', async () => {
    const time = hexTime(nowSeconds());
    const signed = Buffer.from(`bob:${time}`);
    const forge = (key: Buffer | string, digest = 'sha256'): string => Buffer.concat([signed, Buffer.from(':'), createHmac(digest, key).update(signed).digest()]).toString('base64url');
    const rootSalt = server.app.config.get('admins', ADMIN[0])!.split(',')[1]!;
    const forgeries: Record<string, string> = {
      'secret only, no salt': forge(secret),
      'salt only, no secret': forge(bobSalt),
      'salt then secret': forge(bobSalt + secret),
      'another user\'s salt': forge(secret + rootSalt),
      'empty key': forge(''),
      'SHA-1 of secret only': forge(secret, 'sha1'),
      'plain SHA-256 of secret, salt and message': Buffer.concat([signed, Buffer.from(':'), createHash('sha256').update(`${secret}${bobSalt}bob:${time}`).digest()]).toString('base64url'),
      'MD5 with the right key': forge(secret + bobSalt, 'md5'),
    };
    for (const [what, value] of Object.entries(forgeries)) {
      const res = await whoAmI(server, { cookie: `AuthSession=${value}` });
      assert.equal(res.status, 200, what);
      assert.equal(res.body.userCtx.name, null, `${what}: anonymous`);
    }
  });

  test('a user cannot raise their own roles through any door: PUT, POST, rev in the query, delete and re-create, _bulk_docs', async () => {
    await createUser(server, 'ursula', 'u-pass', ['reader']);
    const cookie = await loginCookie(server, 'ursula', 'u-pass');
    const as = { headers: { Cookie: cookie } };
    const doc = (await server.request(userPath('ursula'), as)).body;
    assert.deepEqual(doc.roles, ['reader'], 'the owner reads her document');
    const raise = { ...doc, roles: ['reader', 'ops'] };
    const attempts = [
      await server.request(userPath('ursula'), { ...as, method: 'PUT', body: raise }),
      await server.request(userPath('ursula', `?rev=${doc._rev}`), { ...as, method: 'PUT', body: { ...raise, _rev: undefined } }),
      await server.request('/_users', { ...as, method: 'POST', body: raise }),
      await server.request(userPath('ursula'), { ...as, method: 'PUT', body: '{"_id":"org.couchdb.user:ursula","_rev":"' + doc._rev + '","name":"ursula","type":"user","Roles":["ops"],"roles":["reader"],"ROLES":["ops"],"__proto__":{"roles":["ops"]}}', headers: { Cookie: cookie, 'Content-Type': 'application/json' } }),
      await server.request('/_users/_bulk_docs', { ...as, method: 'POST', body: { docs: [raise] } }),
      await server.request('/_users/_bulk_docs?new_edits=false', { ...as, method: 'POST', body: { docs: [{ ...raise, _rev: '9-ffffffffffffffffffffffffffffffff' }], new_edits: false } }),
    ];
    for (const res of attempts) {
      // 201 only for a write that kept the roles (the last `roles` key wins); the rest are refused.
      if (res.status === 201 && res.body?.ok) continue;
      assert.ok([400, 401, 403, 409].includes(res.status), `${res.status} ${res.text}`);
    }
    assert.deepEqual((await readUser(server, 'ursula'))!['roles'], ['reader'], 'roles unchanged after every attempt');
    // Delete her own document, then create it again with more roles: a create by a non-admin.
    const current = (await readUser(server, 'ursula'))!;
    const deleted = await server.request(userPath('ursula', `?rev=${current['_rev']}`), { ...as, method: 'DELETE' });
    assert.equal(deleted.status, 200, deleted.text);
    const recreate = await server.request(userPath('ursula'), { method: 'PUT', body: { _id: 'org.couchdb.user:ursula', name: 'ursula', type: 'user', roles: ['ops'], password: 'u-pass' }, headers: { Authorization: basicHeader('ursula', 'u-pass') } });
    assert.ok(recreate.status === 401 || recreate.status === 403, `${recreate.status} ${recreate.text}`);
    const anonymous = await server.request(userPath('ursula'), { method: 'PUT', body: { _id: 'org.couchdb.user:ursula', name: 'ursula', type: 'user', roles: ['ops'], password: 'u-pass' } });
    assert.equal(anonymous.status, 401, 'signup is closed by default');
    assert.equal(await readUser(server, 'ursula'), undefined);
  });

  test('an owner may change her password but not her roles in the same write', async () => {
    await createUser(server, 'vera', 'v-pass', ['reader']);
    const cookie = await loginCookie(server, 'vera', 'v-pass');
    const doc = (await server.request(userPath('vera'), { headers: { Cookie: cookie } })).body;
    const res = await server.request(userPath('vera'), { method: 'PUT', body: { ...doc, password: 'v-new', roles: ['reader', 'ops'] }, headers: { Cookie: cookie } });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 403, body: forbidden('Only _admin may edit roles') });
    assert.equal((await whoAmI(server, { auth: ['vera', 'v-pass'] })).status, 200, 'the password did not change either');
  });

  test('a cookie replayed after the user changed her own password, or after the user was deleted and re-created, is anonymous', async () => {
    await createUser(server, 'wanda', 'w-pass', ['reader']);
    const cookie = await loginCookie(server, 'wanda', 'w-pass');
    const doc = (await server.request(userPath('wanda'), { headers: { Cookie: cookie } })).body;
    const changed = await server.request(userPath('wanda'), { method: 'PUT', body: { ...doc, password: 'w-new' }, headers: { Cookie: cookie } });
    assert.equal(changed.status, 201, changed.text);
    assert.equal(authSessionOf(changed), undefined, 'no fresh cookie is handed out for the old one');
    assert.equal((await whoAmI(server, { cookie })).body.userCtx.name, null, 'the old cookie is dead');

    const second = await loginCookie(server, 'wanda', 'w-new');
    const current = (await readUser(server, 'wanda'))!;
    assert.equal((await server.admin(userPath('wanda', `?rev=${current['_rev']}`), { method: 'DELETE' })).status, 200);
    assert.equal((await whoAmI(server, { cookie: second })).body.userCtx.name, null, 'deleted: anonymous');
    await createUser(server, 'wanda', 'w-new', ['reader']);
    assert.equal((await whoAmI(server, { cookie: second })).body.userCtx.name, null, 're-created with the same password: a new salt, the old cookie stays dead');
  });

  test('lockout is not bypassed by Unicode look-alikes, zero-width or trailing control characters in the name', async () => {
    await setConfig('chttpd_auth_lockout', 'mode', 'enforce');
    try {
      await createUser(server, 'lena', 'l-pass');
      const address = '198.51.100.23';
      const from = { 'X-Forwarded-For': address };
      for (let i = 0; i < 5; i++) assert.equal((await whoAmI(server, { auth: ['lena', `wrong-${i}`], headers: from })).status, 401);
      assert.equal((await whoAmI(server, { auth: ['lena', 'l-pass'], headers: from })).status, 403, 'locked');
      const variants = ['ｌｅｎａ', 'lena\u200b', '\u200blena', 'len\u0061\u0301', 'lena\u0000', 'lena\t', 'LENA', 'lenа' /* Cyrillic a */, 'lena\u00a0'];
      for (const variant of variants) {
        const basic = await whoAmI(server, { auth: [variant, 'l-pass'], headers: from });
        assert.equal(basic.status, 401, `Basic ${JSON.stringify(variant)}: ${basic.text}`);
        const session = await server.request('/_session', { method: 'POST', body: { name: variant, password: 'l-pass' }, headers: from });
        assert.equal(session.status, 401, `/_session ${JSON.stringify(variant)}: ${session.text}`);
      }
      assert.equal((await whoAmI(server, { auth: ['lena', 'l-pass'], headers: from })).status, 403, 'still locked');
    } finally {
      await setConfig('chttpd_auth_lockout', 'mode', 'off');
    }
  });

  async function setConfig(section: string, key: string, value: string): Promise<void> {
    const res = await server.admin(`/_node/_local/_config/${section}/${key}`, { method: 'PUT', body: JSON.stringify(value) });
    assert.equal(res.status, 200, res.text);
  }
});
