// GET/HEAD/DELETE /_session, other methods, and the handler list: spec §1.5, §2.1, §2.2, §3, §4.2,
// §4.3; reference §1.2, §4.2–4.4; DESIGN §1 (authentication_db always present, `default` for Basic).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import {
  FAILED_LOGIN,
  FAST_INI,
  NOT_SERVER_ADMIN,
  anonymousSession,
  assertClearingCookie,
  assertJsonText,
  assertNoSetCookie,
  authSessionHeader,
  authenticatedSession,
  basic,
  cookie,
  createUser,
  decodeToken,
  putConfig,
  sessionCookie,
  sessionValue,
  whoAmI,
  withConfig,
} from '../support/session-helpers.js';

const HANDLERS = (...names: string[]): string => names.map((name) => `{chttpd_auth, ${name}_authentication_handler}`).join(', ');

describe('GET and HEAD /_session', () => {
  let server: TestServer;
  let aliceCookie: string;

  before(async () => {
    server = await startServer({ ini: FAST_INI });
    await createUser(server, 'alice', 'alice-pw', ['reader']);
    aliceCookie = await sessionCookie(server, 'alice', 'alice-pw');
  });
  after(async () => server.close());

  test('R-GET-2 R-CTX-1 R-CTX-2 R-INFO-2 R-INFO-3: anonymous → 200 {ok, userCtx{name:null, roles:[]}, info} without `authenticated`, keys in order', async () => {
    const res = await whoAmI(server);
    assert.equal(res.status, 200);
    assertJsonText(res, anonymousSession());
    assert.deepEqual(Object.keys(res.body), ['ok', 'userCtx', 'info']);
    assert.deepEqual(Object.keys(res.body.info), ['authentication_handlers', 'authentication_db']);
    assertNoSetCookie(res);
  });

  test('R-GET-1 R-INFO-1 R-METH-2: with a cookie → authenticated "cookie", userCtx {name, roles}', async () => {
    const res = await whoAmI(server, cookie(aliceCookie));
    assert.equal(res.status, 200);
    assertJsonText(res, authenticatedSession('alice', ['reader'], 'cookie'));
    assert.deepEqual(Object.keys(res.body.info), ['authentication_handlers', 'authenticated', 'authentication_db']);
    assertNoSetCookie(res, 'a young cookie is not refreshed');
  });

  test('R-GET-1 R-INFO-1 R-METH-2 R-BASIC-1: with Basic → authenticated "default" (DESIGN §1)', async () => {
    const res = await whoAmI(server, { Authorization: basic('alice', 'alice-pw') });
    assert.equal(res.status, 200);
    assertJsonText(res, authenticatedSession('alice', ['reader'], 'default'));
    const admin = await whoAmI(server, { Authorization: basic('root', 'r00t-pass') });
    assertJsonText(admin, authenticatedSession('root', ['_admin'], 'default'));
  });

  test('Basic `_:_` (Basic Xzpf) is the logout credential: anonymous, no `authenticated`', async () => {
    const res = await whoAmI(server, { Authorization: 'Basic Xzpf' });
    assert.equal(res.status, 200);
    assertJsonText(res, anonymousSession());
    assertNoSetCookie(res);
  });

  test('R-GET-3: ?basic=true for an anonymous caller → 401 Please login. (no WWW-Authenticate by default)', async () => {
    const res = await whoAmI(server, {}, '?basic=true');
    assert.equal(res.status, 401);
    assertJsonText(res, { error: 'unauthorized', reason: 'Please login.' });
    assert.equal(res.headers['www-authenticate'], undefined);
    assertNoSetCookie(res);
  });

  test('R-GET-3: ?basic=true with Basic credentials or a cookie → 200', async () => {
    const viaBasic = await whoAmI(server, { Authorization: basic('alice', 'alice-pw') }, '?basic=true');
    assert.equal(viaBasic.status, 200);
    assertJsonText(viaBasic, authenticatedSession('alice', ['reader'], 'default'));
    const viaCookie = await whoAmI(server, cookie(aliceCookie), '?basic=true');
    assert.equal(viaCookie.status, 200);
    assertJsonText(viaCookie, authenticatedSession('alice', ['reader'], 'cookie'));
  });

  test('R-GET-3: only the exact string "true" asks for a login', async () => {
    for (const value of ['false', '1', 'TRUE', '']) {
      const res = await whoAmI(server, {}, `?basic=${value}`);
      assert.equal(res.status, 200, value);
      assertJsonText(res, anonymousSession());
    }
  });

  test('R-GET-3: the Please login. 401 goes through the generic path, so X-CouchDB-WWW-Authenticate is echoed', async () => {
    const res = await whoAmI(server, { 'X-CouchDB-WWW-Authenticate': 'Cookie' }, '?basic=true');
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Cookie');
    assertJsonText(res, { error: 'unauthorized', reason: 'Please login.' });
  });

  test('R-GET-4 R-ERR-2: unrecognised Basic credentials → 401 Name or password is incorrect.', async () => {
    for (const query of ['', '?basic=true']) {
      const res = await whoAmI(server, { Authorization: basic('alice', 'wrong') }, query);
      assert.equal(res.status, 401, query);
      assertJsonText(res, FAILED_LOGIN);
      assert.equal(res.headers['www-authenticate'], undefined);
      assertNoSetCookie(res);
    }
    const unknown = await whoAmI(server, { Authorization: basic('nobody', 'x') });
    assert.equal(unknown.status, 401);
    assertJsonText(unknown, FAILED_LOGIN);
  });

  test('HEAD /_session behaves as GET without a body', async () => {
    const get = await whoAmI(server, cookie(aliceCookie));
    const head = await server.request('/_session', { method: 'HEAD', headers: cookie(aliceCookie) });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers['content-type'], 'application/json');
    assert.equal(head.headers['cache-control'], 'must-revalidate');
    assert.equal(head.headers['content-length'], get.headers['content-length']);
    const anonymous = await server.request('/_session?basic=true', { method: 'HEAD' });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.text, '');
  });

  test('R-METH-3 R-METH-5 R-INFO-3: only the default handler → ["default"]; Basic still works, a cookie is ignored', async () => {
    await withConfig(server, [['chttpd', 'authentication_handlers', HANDLERS('default')]], async () => {
      const viaBasic = await whoAmI(server, { Authorization: basic('alice', 'alice-pw') });
      assert.equal(viaBasic.status, 200);
      assertJsonText(viaBasic, authenticatedSession('alice', ['reader'], 'default', ['default']));
      const viaCookie = await whoAmI(server, cookie(aliceCookie));
      assert.equal(viaCookie.status, 200);
      assertJsonText(viaCookie, anonymousSession(['default']));
    });
    assertJsonText(await whoAmI(server), anonymousSession());
  });

  test('R-METH-3 R-INFO-3: the order of the setting is the order of the list', async () => {
    await withConfig(server, [['chttpd', 'authentication_handlers', HANDLERS('default', 'cookie')]], async () => {
      const viaCookie = await whoAmI(server, cookie(aliceCookie));
      assertJsonText(viaCookie, authenticatedSession('alice', ['reader'], 'cookie', ['default', 'cookie']));
      const anonymous = await whoAmI(server);
      assertJsonText(anonymous, anonymousSession(['default', 'cookie']));
    });
  });

  test('R-METH-3: with only the cookie handler, Basic credentials are not looked at', async () => {
    const adminCookie = await sessionCookie(server, 'root', 'r00t-pass');
    await putConfig(server, 'chttpd', 'authentication_handlers', HANDLERS('cookie'));
    try {
      const viaBasic = await whoAmI(server, { Authorization: basic('alice', 'alice-pw') });
      assert.equal(viaBasic.status, 200);
      assertJsonText(viaBasic, anonymousSession(['cookie']));
      const wrong = await whoAmI(server, { Authorization: basic('alice', 'wrong') });
      assert.equal(wrong.status, 200, 'a wrong password is not even checked');
      assertJsonText(await whoAmI(server, cookie(aliceCookie)), authenticatedSession('alice', ['reader'], 'cookie', ['cookie']));
    } finally {
      await putConfig(server, 'chttpd', 'authentication_handlers', undefined, cookie(adminCookie));
    }
    assertJsonText(await whoAmI(server), anonymousSession());
  });

  test('R-METH-3 R-INFO-3: the spec sample list cookie, proxy, default is reported in order', async () => {
    await withConfig(server, [['chttpd', 'authentication_handlers', HANDLERS('cookie', 'proxy', 'default')]], async () => {
      assertJsonText(await whoAmI(server), anonymousSession(['cookie', 'proxy', 'default']));
    });
  });

  test('R-METH-1 R-METH-3 R-INFO-3: all four handlers can be listed; info names them in order (CouchDB test harness list)', async () => {
    await withConfig(server, [['chttpd', 'authentication_handlers', HANDLERS('jwt', 'proxy', 'cookie', 'default')]], async () => {
      const res = await whoAmI(server);
      assert.equal(res.status, 200);
      assertJsonText(res, anonymousSession(['jwt', 'proxy', 'cookie', 'default']));
    });
  });

  test('R-METH-4: by default a Bearer token and proxy headers are ignored (anonymous, no error)', async () => {
    const bearer = await whoAmI(server, { Authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.c2ln' });
    assert.equal(bearer.status, 200);
    assertJsonText(bearer, anonymousSession());
    const proxyHeaders = { 'X-Auth-CouchDB-UserName': 'mallory', 'X-Auth-CouchDB-Roles': '_admin', 'X-Auth-CouchDB-Token': 'abc' };
    const proxy = await whoAmI(server, proxyHeaders);
    assert.equal(proxy.status, 200);
    assertJsonText(proxy, anonymousSession());
    const config = await server.request('/_node/_local/_config', { headers: proxyHeaders });
    assert.equal(config.status, 401);
    assertJsonText(config, NOT_SERVER_ADMIN);
  });

  test('R-METH-4 R-GET-1 R-METH-2: once the proxy handler is listed, proxy headers authenticate GET /_session', async () => {
    await withConfig(server, [['chttpd', 'authentication_handlers', HANDLERS('cookie', 'proxy', 'default')]], async () => {
      const res = await whoAmI(server, { 'X-Auth-CouchDB-UserName': 'pat', 'X-Auth-CouchDB-Roles': 'r1, r2' });
      assert.equal(res.status, 200);
      assertJsonText(res, authenticatedSession('pat', ['r1', 'r2'], 'proxy', ['cookie', 'proxy', 'default']));
    });
  });

  test('R-METH-4: once the jwt handler is listed, a Bearer token is checked by it (a malformed one → 400 Malformed token)', async () => {
    await withConfig(server, [['chttpd', 'authentication_handlers', HANDLERS('jwt', 'cookie', 'default')]], async () => {
      const res = await whoAmI(server, { Authorization: 'Bearer not-a-jwt' });
      assert.equal(res.status, 400, res.text);
      assertJsonText(res, { error: 'bad_request', reason: 'Malformed token' });
    });
  });

  test('R-INFO-2: info.authentication_db follows [chttpd_auth] authentication_db', async () => {
    await withConfig(server, [['chttpd_auth', 'authentication_db', 'accounts']], async () => {
      const res = await whoAmI(server, { Authorization: basic('root', 'r00t-pass') });
      assert.equal(res.status, 200);
      assertJsonText(res, authenticatedSession('root', ['_admin'], 'default', ['cookie', 'default'], 'accounts'));
      assertJsonText(await whoAmI(server), anonymousSession(['cookie', 'default'], 'accounts'));
    });
    assertJsonText(await whoAmI(server), anonymousSession());
  });
});

describe('DELETE /_session and other methods', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ ini: FAST_INI });
    await createUser(server, 'bob', 'bob-pw', ['b']);
  });
  after(async () => server.close());

  test('R-DEL-1 R-COOKIE-5: anonymous DELETE → 200 {"ok":true} with a clearing cookie', async () => {
    const res = await server.request('/_session', { method: 'DELETE' });
    assert.equal(res.status, 200);
    assertJsonText(res, { ok: true });
    assertClearingCookie(res);
  });

  test('R-DEL-1 R-STATE-5: DELETE with a cookie clears it on the client only: the old token keeps working', async () => {
    const value = await sessionCookie(server, 'bob', 'bob-pw');
    const res = await server.request('/_session', { method: 'DELETE', headers: cookie(value) });
    assert.equal(res.status, 200);
    assertJsonText(res, { ok: true });
    assertClearingCookie(res);
    const after = await whoAmI(server, cookie(value));
    assert.equal(after.status, 200);
    assertJsonText(after, authenticatedSession('bob', ['b'], 'cookie'));
  });

  test('R-DEL-1: DELETE with Basic carries only the clearing cookie (the Basic cookie is not added)', async () => {
    const res = await server.request('/_session', { method: 'DELETE', headers: { Authorization: basic('bob', 'bob-pw') } });
    assert.equal(res.status, 200);
    assertJsonText(res, { ok: true });
    assertClearingCookie(res);
  });

  test('R-DEL-1: no request body is needed, and one sent is ignored', async () => {
    // node:http does not frame a DELETE body by itself: give its length.
    const res = await server.request('/_session', { method: 'DELETE', headers: { 'Content-Type': 'application/json', 'Content-Length': '14' }, body: '{"name":"bob"}' });
    assert.equal(res.status, 200);
    assertJsonText(res, { ok: true });
    assertClearingCookie(res);
  });

  test('DELETE ?next=/x → 302, absolute Location, body {"ok":true}, clearing cookie; ?next=x → 400', async () => {
    const res = await server.request('/_session?next=/bye', { method: 'DELETE' });
    assert.equal(res.status, 302);
    assert.equal(res.headers['location'], `${server.url}/bye`);
    assertJsonText(res, { ok: true });
    assertClearingCookie(res);
    const bad = await server.request('/_session?next=bye', { method: 'DELETE' });
    assert.equal(bad.status, 400);
    assertJsonText(bad, { error: 'bad_request', reason: 'path must begin with a /.' });
    assertNoSetCookie(bad);
  });

  test('PUT and PATCH → 405 Only GET,HEAD,POST,DELETE allowed with Allow: GET,HEAD,POST,DELETE', async () => {
    for (const method of ['PUT', 'PATCH']) {
      const res = await server.request('/_session', { method, headers: { 'Content-Type': 'application/json' }, body: '{}' });
      assert.equal(res.status, 405, method);
      assertJsonText(res, { error: 'method_not_allowed', reason: 'Only GET,HEAD,POST,DELETE allowed' });
      assert.equal(res.headers['allow'], 'GET,HEAD,POST,DELETE');
      assertNoSetCookie(res);
    }
  });

  test('R-STATE-1 R-CK-1 R-CK-2: log in, use the cookie, log out: the whole cycle', async () => {
    const login = await server.request('/_session', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'name=bob&password=bob-pw' });
    assert.equal(login.status, 200);
    const value = sessionValue(login);
    assert.equal(decodeToken(value).name, 'bob');
    const session = await whoAmI(server, cookie(value));
    assertJsonText(session, authenticatedSession('bob', ['b'], 'cookie'));
    const logout = await server.request('/_session', { method: 'DELETE', headers: cookie(value) });
    assert.equal(authSessionHeader(logout).startsWith('AuthSession=;'), true);
    // The client now sends the empty value it was given: anonymous, not an error.
    const cleared = await whoAmI(server, { Cookie: 'AuthSession=' });
    assert.equal(cleared.status, 200);
    assertJsonText(cleared, anonymousSession());
  });
});
