// POST /_session (login): spec §4.1, reference §4.1, §3.1, §3.2, §3.5, §9.2; DESIGN §1 (302 body
// name null, same-origin redirects only).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import type { HttpResponse } from '../support/http.js';
import {
  BAD_CONTENT_TYPE,
  FAILED_LOGIN,
  FAST_INI,
  assertClearingCookie,
  assertJsonText,
  assertNoSetCookie,
  authenticatedSession,
  basic,
  cookie,
  createUser,
  decodeToken,
  getConfig,
  handMadeCookie,
  logIn,
  nowSeconds,
  sessionValue,
  whoAmI,
  withConfig,
} from '../support/session-helpers.js';

const ALICE_PW = 'al ice+pw';
const ALICE_ROLES = ['reader', 'writer'];

describe('POST /_session', () => {
  let server: TestServer;
  let aliceSalt: string;

  const form = (body: string, query = '', headers: Record<string, string> = {}): Promise<HttpResponse> =>
    server.request(`/_session${query}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body });
  const jsonLogin = (body: string | Buffer, query = '', headers: Record<string, string> = {}): Promise<HttpResponse> =>
    server.request(`/_session${query}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

  function assertAliceSession(res: HttpResponse): string {
    assert.equal(res.status, 200, res.text);
    assertJsonText(res, { ok: true, name: 'alice', roles: ALICE_ROLES });
    const value = sessionValue(res);
    assert.equal(decodeToken(value).name, 'alice');
    return value;
  }

  before(async () => {
    server = await startServer({ ini: FAST_INI });
    aliceSalt = await createUser(server, 'alice', ALICE_PW, ALICE_ROLES);
    await createUser(server, 'emptypw', '');
  });
  after(async () => server.close());

  test('R-POST-1 R-STATE-1 R-CK-1 R-COOKIE-1 R-COOKIE-2: a form login answers 200 {ok,name,roles} with Set-Cookie AuthSession', async () => {
    // `+` is a space and %2B a plus in application/x-www-form-urlencoded.
    const res = await form('name=alice&password=al+ice%2Bpw');
    const value = assertAliceSession(res);
    // The token: base64url("alice:HEXTIME:" + HMAC-SHA256(secret ‖ salt, "alice:HEXTIME")).
    const token = decodeToken(value);
    assert.match(token.timeHex, /^[0-9A-F]+$/, 'uppercase hex time');
    assert.ok(Math.abs(token.time - nowSeconds()) <= 3, 'issued now');
    assert.equal(token.mac.length, 32, 'a raw 32-byte HMAC-SHA256');
    const secret = await getConfig(server, 'chttpd_auth', 'secret');
    assert.ok(secret);
    const expectedMac = createHmac('sha256', Buffer.from(secret + aliceSalt)).update(`alice:${token.timeHex}`).digest();
    assert.deepEqual(token.mac, expectedMac);
    assert.equal(value, handMadeCookie('alice', token.timeHex, secret, aliceSalt));
  });

  test('R-POST-1 R-CK-2: a JSON login answers 200 and its cookie authenticates later requests without the password', async () => {
    const value = assertAliceSession(await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW })));
    const session = await whoAmI(server, cookie(value));
    assert.equal(session.status, 200);
    assertJsonText(session, authenticatedSession('alice', ALICE_ROLES, 'cookie'));
  });

  test('R-POST-1: Content-Type parameters are allowed (application/json; charset=utf-8)', async () => {
    assertAliceSession(await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '', { 'Content-Type': 'application/json; charset=utf-8' }));
    assertAliceSession(await form('name=alice&password=al%20ice%2Bpw', '', { 'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8' }));
  });

  test('a gzip-compressed JSON body with Content-Encoding: gzip logs in', async () => {
    const body = gzipSync(Buffer.from(JSON.stringify({ name: 'alice', password: ALICE_PW })));
    assertAliceSession(await jsonLogin(body, '', { 'Content-Encoding': 'gzip' }));
  });

  test('a Content-Encoding other than gzip or identity → 415 "<enc> is not a supported content encoding."', async () => {
    const res = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '', { 'Content-Encoding': 'deflate' });
    assert.equal(res.status, 415);
    assertJsonText(res, { error: 'bad_content_type', reason: 'deflate is not a supported content encoding.' });
    assertNoSetCookie(res);
  });

  test('`username` is read instead of `name`; both present and equal is fine', async () => {
    const viaUsername = await jsonLogin(JSON.stringify({ username: 'alice', password: ALICE_PW }));
    assertAliceSession(viaUsername);
    assertAliceSession(await jsonLogin(JSON.stringify({ name: 'alice', username: 'alice', password: ALICE_PW })));
    assertAliceSession(await form('username=alice&name=alice&password=al+ice%2Bpw'));
  });

  test('`name` and `username` that differ → 400 request body contains different usernames', async () => {
    const expected = { error: 'bad_request', reason: 'request body contains different usernames' };
    for (const res of [
      await jsonLogin(JSON.stringify({ name: 'alice', username: 'emptypw', password: ALICE_PW })),
      await form('name=alice&username=root&password=al+ice%2Bpw'),
    ]) {
      assert.equal(res.status, 400);
      assertJsonText(res, expected);
      assertNoSetCookie(res);
    }
  });

  test('neither `name` nor `username` → 400 request body must contain a username', async () => {
    const expected = { error: 'bad_request', reason: 'request body must contain a username' };
    for (const res of [
      await jsonLogin(JSON.stringify({ password: ALICE_PW })),
      await jsonLogin('{}'),
      await form('password=x'),
      await form(''),
    ]) {
      assert.equal(res.status, 400, res.text);
      assertJsonText(res, expected);
      assertNoSetCookie(res);
    }
  });

  test('a missing password is the empty string', async () => {
    const json = await jsonLogin(JSON.stringify({ name: 'emptypw' }));
    assert.equal(json.status, 200, json.text);
    assertJsonText(json, { ok: true, name: 'emptypw', roles: [] });
    sessionValue(json);
    const viaForm = await form('name=emptypw');
    assert.equal(viaForm.status, 200, viaForm.text);
    assertJsonText(viaForm, { ok: true, name: 'emptypw', roles: [] });
    const wrong = await jsonLogin(JSON.stringify({ name: 'alice' }));
    assert.equal(wrong.status, 401);
    assertJsonText(wrong, FAILED_LOGIN);
  });

  test('415 bad_content_type for text/plain, a missing or empty Content-Type, and a differently cased one', async () => {
    const body = JSON.stringify({ name: 'alice', password: ALICE_PW });
    const cases: Array<Record<string, string>> = [
      { 'Content-Type': 'text/plain' },
      {},
      { 'Content-Type': '' },
      { 'Content-Type': 'Application/JSON' },
      { 'Content-Type': 'multipart/form-data; boundary=x' },
    ];
    for (const headers of cases) {
      const res = await server.request('/_session', { method: 'POST', headers, body });
      assert.equal(res.status, 415, JSON.stringify(headers));
      assertJsonText(res, BAD_CONTENT_TYPE);
      assertNoSetCookie(res);
    }
  });

  test('invalid JSON, an empty JSON body and invalid UTF-8 → 400 invalid UTF-8 JSON', async () => {
    const bodies: Array<string | Buffer> = [
      '{"name": "alice", "password": ',
      '',
      Buffer.concat([Buffer.from('{"name":"alice","password":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    ];
    for (const body of bodies) {
      const res = await jsonLogin(body);
      assert.equal(res.status, 400, String(body));
      assertJsonText(res, { error: 'bad_request', reason: 'invalid UTF-8 JSON' });
      assertNoSetCookie(res);
    }
  });

  test('a non-string member, even an unrelated one, → 400 bad_request (CouchDB crashes with 500)', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'alice', password: 123 }, 'password'],
      [{ name: 'alice', password: ALICE_PW, remember: true }, 'remember'],
      [{ name: null, password: ALICE_PW }, 'name'],
      [{ name: ['alice'], password: ALICE_PW }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await jsonLogin(JSON.stringify(body));
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(Object.keys(res.body), ['error', 'reason']);
      assert.equal(res.body.error, 'bad_request');
      assert.ok(res.body.reason.includes(field), `the reason names the field ${field}: ${res.body.reason}`);
      assertNoSetCookie(res);
    }
  });

  test('a JSON body that is not an object → 400 bad_request (CouchDB crashes with 500)', async () => {
    for (const body of ['[]', '"alice"', 'null', '42']) {
      const res = await jsonLogin(body);
      assert.equal(res.status, 400, body);
      assert.equal(res.body.error, 'bad_request');
      assertNoSetCookie(res);
    }
  });

  test('duplicate JSON keys: the last one wins', async () => {
    assertAliceSession(await jsonLogin('{"name":"emptypw","name":"alice","password":"wrong","password":"al ice+pw"}'));
  });

  test('R-POST-4 R-ERR-1: a wrong password → 401 exact body, a clearing cookie, no WWW-Authenticate', async () => {
    const res = await jsonLogin(JSON.stringify({ name: 'alice', password: 'wrong' }));
    assert.equal(res.status, 401);
    assertJsonText(res, FAILED_LOGIN);
    assertClearingCookie(res);
    assert.equal(res.headers['www-authenticate'], undefined);
    assert.equal(res.headers['location'], undefined);
  });

  test('R-POST-4: an unknown user → 401 exact body and a clearing cookie', async () => {
    const res = await form('name=nobody&password=x');
    assert.equal(res.status, 401);
    assertJsonText(res, FAILED_LOGIN);
    assertClearingCookie(res);
  });

  test('the login 401 never carries WWW-Authenticate: not with X-CouchDB-WWW-Authenticate, nor [chttpd] WWW-Authenticate', async () => {
    const requested = await jsonLogin(JSON.stringify({ name: 'alice', password: 'wrong' }), '', { 'X-CouchDB-WWW-Authenticate': 'Cookie' });
    assert.equal(requested.status, 401);
    assertJsonText(requested, FAILED_LOGIN);
    assert.equal(requested.headers['www-authenticate'], undefined);
    await withConfig(server, [['chttpd', 'WWW-Authenticate', 'Basic realm="configured"']], async () => {
      const configured = await jsonLogin(JSON.stringify({ name: 'alice', password: 'wrong' }));
      assert.equal(configured.status, 401);
      assert.equal(configured.headers['www-authenticate'], undefined);
      assertClearingCookie(configured);
    });
  });

  test('the login 401 is JSON for a browser too (no redirect to the login page)', async () => {
    const res = await jsonLogin(JSON.stringify({ name: 'alice', password: 'wrong' }), '', {
      Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    });
    assert.equal(res.status, 401);
    assertJsonText(res, FAILED_LOGIN);
    assert.equal(res.headers['location'], undefined);
  });

  test('a server admin logs in with roles ["_admin"]', async () => {
    const res = await jsonLogin(JSON.stringify({ name: 'root', password: 'r00t-pass' }));
    assert.equal(res.status, 200);
    assertJsonText(res, { ok: true, name: 'root', roles: ['_admin'] });
    assert.equal(decodeToken(sessionValue(res)).name, 'root');
  });

  test('R-POST-2 R-POST-3 R-CTX-1: ?next=/x → 302, absolute Location, body {ok:true,name:null,roles} and the cookie', async () => {
    const res = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '?next=/x');
    assert.equal(res.status, 302);
    assert.equal(res.headers['location'], `${server.url}/x`);
    assertJsonText(res, { ok: true, name: null, roles: ALICE_ROLES });
    const value = sessionValue(res);
    assert.equal(decodeToken(value).name, 'alice');
    const session = await whoAmI(server, cookie(value));
    assert.equal(session.body.userCtx.name, 'alice');
  });

  test('R-POST-2: ?next keeps its own query string (percent-decoded once from ours)', async () => {
    const res = await form('name=alice&password=al+ice%2Bpw', `?next=${encodeURIComponent('/_utils/index.html?a=1&b=2')}`);
    assert.equal(res.status, 302);
    assert.equal(res.headers['location'], `${server.url}/_utils/index.html?a=1&b=2`);
    assertJsonText(res, { ok: true, name: null, roles: ALICE_ROLES });
  });

  test('?fail=/x with a bad password → 302, Location, the 401 body and the clearing cookie', async () => {
    const res = await jsonLogin(JSON.stringify({ name: 'alice', password: 'wrong' }), '?fail=/login-failed');
    assert.equal(res.status, 302);
    assert.equal(res.headers['location'], `${server.url}/login-failed`);
    assertJsonText(res, FAILED_LOGIN);
    assertClearingCookie(res);
    assert.equal(res.headers['www-authenticate'], undefined);
  });

  test('?fail is not used on success and ?next is not used on failure', async () => {
    const success = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '?fail=/failed');
    assertAliceSession(success);
    assert.equal(success.headers['location'], undefined);
    const failure = await jsonLogin(JSON.stringify({ name: 'alice', password: 'wrong' }), '?next=/welcome');
    assert.equal(failure.status, 401);
    assertJsonText(failure, FAILED_LOGIN);
    assert.equal(failure.headers['location'], undefined);
    assertClearingCookie(failure);
  });

  test('R-POST-2: a `next` not starting with / → 400 path must begin with a /. and no cookie', async () => {
    for (const next of ['x', 'http://evil.example/', '', 'evil.example/x', 'https:/evil.example']) {
      const res = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), `?next=${encodeURIComponent(next)}`);
      assert.equal(res.status, 400, next);
      assertJsonText(res, { error: 'bad_request', reason: 'path must begin with a /.' });
      assertNoSetCookie(res, `no cookie for next=${next}`);
      assert.equal(res.headers['location'], undefined);
    }
    const fail = await jsonLogin(JSON.stringify({ name: 'alice', password: 'wrong' }), '?fail=elsewhere');
    assert.equal(fail.status, 400);
    assertJsonText(fail, { error: 'bad_request', reason: 'path must begin with a /.' });
  });

  test('R-POST-2 (DESIGN §1): next/fail leading off this origin (//host, /\\host, control characters) → 400, no cookie, no Location', async () => {
    const targets = ['//evil.example', '//evil.example/x', '/\\evil.example', '/\\/evil.example', '/\t/evil.example', '/\n/evil.example', '/x\r\nSet-Cookie: a=b'];
    for (const target of targets) {
      const res = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), `?next=${encodeURIComponent(target)}`);
      assert.equal(res.status, 400, JSON.stringify(target));
      assert.deepEqual(Object.keys(res.body), ['error', 'reason']);
      assert.equal(res.body.error, 'bad_request');
      assertNoSetCookie(res, `no cookie for next=${JSON.stringify(target)}`);
      assert.equal(res.headers['location'], undefined);
    }
    // The raw form of the brief: `?next=/%09/evil` is a tab after the slash.
    const tab = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '?next=/%09/evil');
    assert.equal(tab.status, 400);
    assertNoSetCookie(tab);
    const fail = await jsonLogin(JSON.stringify({ name: 'alice', password: 'wrong' }), '?fail=//evil.example');
    assert.equal(fail.status, 400);
    assert.equal(fail.body.error, 'bad_request');
    assert.equal(fail.headers['location'], undefined);
    const logout = await server.request('/_session?next=//evil.example', { method: 'DELETE' });
    assert.equal(logout.status, 400);
    assert.equal(logout.headers['location'], undefined);
  });

  test('X-Forwarded-Host and X-Forwarded-Proto are believed from a trusted proxy (loopback by default)', async () => {
    const res = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '?next=/app', {
      'X-Forwarded-Host': 'couch.example.org:8443',
      'X-Forwarded-Proto': 'https',
    });
    assert.equal(res.status, 302);
    assert.equal(res.headers['location'], 'https://couch.example.org:8443/app');
    // X-Forwarded-Proto does not make the cookie Secure (only a TLS connection or secure_cookie does).
    sessionValue(res);
    const ssl = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '?next=/app', { 'X-Forwarded-Ssl': 'on' });
    assert.equal(ssl.headers['location'], `${server.url.replace('http:', 'https:')}/app`);
    const notHttps = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '?next=/app', { 'X-Forwarded-Proto': 'HTTPS-ish' });
    assert.equal(notHttps.headers['location'], `${server.url}/app`);
  });

  test('X-Forwarded-Host is ignored when the peer is not in [chttpd] trusted_proxies', async () => {
    await withConfig(server, [['chttpd', 'trusted_proxies', '10.9.9.9']], async () => {
      const res = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '?next=/app', {
        'X-Forwarded-Host': 'evil.example',
        'X-Forwarded-Proto': 'https',
      });
      assert.equal(res.status, 302);
      assert.equal(res.headers['location'], `${server.url}/app`);
    });
  });

  test('`next` and `fail` fields in the body are ignored (only the query string counts)', async () => {
    const json = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW, next: '/x' }));
    assertAliceSession(json);
    assert.equal(json.headers['location'], undefined);
    const viaForm = await form('name=alice&password=al+ice%2Bpw&next=%2Fx');
    assertAliceSession(viaForm);
    assert.equal(viaForm.headers['location'], undefined);
    const failed = await jsonLogin(JSON.stringify({ name: 'alice', password: 'wrong', fail: '/x' }));
    assert.equal(failed.status, 401);
    assert.equal(failed.headers['location'], undefined);
  });

  test('the body credentials decide: Basic of another user on the login request does not change the cookie', async () => {
    const res = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '', { Authorization: basic('root', 'r00t-pass') });
    const value = assertAliceSession(res);
    assert.equal(decodeToken(value).name, 'alice');
  });

  test('authentication runs first: wrong Basic credentials on POST /_session → 401 before the login', async () => {
    const res = await jsonLogin(JSON.stringify({ name: 'alice', password: ALICE_PW }), '', { Authorization: basic('root', 'wrong') });
    assert.equal(res.status, 401);
    assertJsonText(res, FAILED_LOGIN);
    assertNoSetCookie(res);
  });
});

describe('POST /_session: the cookie secret', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI });
  });
  after(async () => server.close());

  test('a start without COUCHDB_SECRET has no secret; the first login generates one (32 hex) and persists it', async () => {
    assert.equal(server.app.config.get('chttpd_auth', 'secret'), undefined, 'no secret before the first login');
    assert.equal(server.app.config.get('couch_httpd_auth', 'secret'), undefined);
    const res = await server.request('/_session', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'name=root&password=r00t-pass' });
    assert.equal(res.status, 200);
    const value = sessionValue(res);
    const secret = await getConfig(server, 'chttpd_auth', 'secret');
    assert.match(secret ?? '', /^[0-9a-f]{32}$/);
    assert.match(readFileSync(join(server.dataDir, 'test.ini'), 'utf8'), new RegExp(`^secret = ${secret}$`, 'm'));
    const salt = (await getConfig(server, 'admins', 'root'))!.split(',')[1]!;
    const token = decodeToken(value);
    assert.equal(value, handMadeCookie('root', token.timeHex, secret!, salt), 'the cookie is signed with the stored secret');
    // A second login keeps the same secret.
    const again = await logIn(server, 'root', 'r00t-pass');
    assert.equal(again.status, 200);
    assert.equal(await getConfig(server, 'chttpd_auth', 'secret'), secret);
  });
});

describe('POST /_session: COUCHDB_SECRET', () => {
  let server: TestServer;
  const SECRET = '92de07df7e7a3fe14808cef90a7cc0d9';
  before(async () => {
    server = await startServer({ ini: FAST_INI, env: { COUCHDB_SECRET: SECRET } });
  });
  after(async () => server.close());

  test('COUCHDB_SECRET sets [chttpd_auth] secret and cookies are signed with it', async () => {
    assert.equal(await getConfig(server, 'chttpd_auth', 'secret'), SECRET);
    const res = await logIn(server, 'root', 'r00t-pass');
    assert.equal(res.status, 200);
    const value = sessionValue(res);
    const salt = (await getConfig(server, 'admins', 'root'))!.split(',')[1]!;
    assert.equal(value, handMadeCookie('root', decodeToken(value).timeHex, SECRET, salt));
  });
});
