// Basic authentication (the default handler): spec §5.1, §3 (Basic → Set-Cookie), §4.4; reference
// §2.1–2.3, §1.3, §9.2; DESIGN §1 (Basic cookie, Basic decides over a cookie, browser redirect), §8.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { mintCookieValue } from '../../src/auth/cookie/codec.js';
import { startServer, type TestServer } from '../support/server.js';
import type { HttpResponse } from '../support/http.js';
import {
  BROWSER_ACCEPT,
  FAILED_LOGIN,
  FAST_INI,
  anonymousSession,
  assertJsonText,
  assertNoSetCookie,
  authenticatedSession,
  basic,
  cookie,
  createHashedUser,
  createUser,
  decodeToken,
  handMadeCookie,
  logIn,
  nowSeconds,
  pbkdf2Fields,
  serverSecret,
  sessionCookie,
  sessionValue,
  whoAmI,
  withConfig,
} from '../support/session-helpers.js';

const NOT_AUTHORIZED_DB = { error: 'unauthorized', reason: 'You are not authorized to access this db.' };

describe('Basic authentication', () => {
  let server: TestServer;
  let secret: string;
  let carolSalt: string;
  let davidSalt: string;

  const asCarol = (password = 'carol-pw'): Record<string, string> => ({ Authorization: basic('carol', password) });

  function assertCarol(res: HttpResponse, handler = 'default'): void {
    assert.equal(res.status, 200, res.text);
    assertJsonText(res, authenticatedSession('carol', ['c'], handler));
  }
  function assertAnonymous(res: HttpResponse): void {
    assert.equal(res.status, 200, res.text);
    assertJsonText(res, anonymousSession());
    assertNoSetCookie(res);
  }
  function assertFailed(res: HttpResponse): void {
    assert.equal(res.status, 401, res.text);
    assertJsonText(res, FAILED_LOGIN);
    assert.equal(res.headers['www-authenticate'], undefined);
    assertNoSetCookie(res);
  }

  before(async () => {
    server = await startServer({ ini: FAST_INI });
    carolSalt = await createUser(server, 'carol', 'carol-pw', ['c']);
    davidSalt = await createUser(server, 'david', 'david-pw', ['d']);
    await createUser(server, 'eve', 'p:w:d');
    await createUser(server, 'frank', '');
    await createUser(server, 'foo@example.org', ':bar');
    const db = await server.admin('/db', { method: 'PUT' });
    assert.equal(db.status, 201);
    secret = await serverSecret(server);
  });
  after(async () => server.close());

  test('R-BASIC-1 R-ROOT-2: GET / accepts Authorization: Basic and answers as it does for anyone', async () => {
    const anonymous = await server.request('/');
    const res = await server.request('/', { headers: asCarol() });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, anonymous.body);
    assert.equal(typeof res.body.uuid, 'string');
  });

  test('R-BASIC-1: Basic on every request authenticates it (root admin reaches _config)', async () => {
    assertCarol(await whoAmI(server, asCarol()));
    const config = await server.request('/_node/_local/_config/couchdb/default_security', { headers: { Authorization: basic('root', 'r00t-pass') } });
    assert.equal(config.status, 200);
    assert.equal(config.body, 'admin_only');
  });

  test('R-STATE-2 R-VER-3 R-BASIC-2: a successful Basic request gets Set-Cookie AuthSession; that cookie authenticates later requests', async () => {
    const res = await whoAmI(server, asCarol());
    assertCarol(res);
    const value = sessionValue(res);
    const token = decodeToken(value);
    assert.equal(token.name, 'carol');
    assert.ok(Math.abs(token.time - nowSeconds()) <= 2);
    assert.equal(value, handMadeCookie('carol', token.timeHex, secret, carolSalt));
    const later = await whoAmI(server, cookie(value));
    assertCarol(later, 'cookie');
    assertNoSetCookie(later);
    for (const path of ['/', '/_up']) {
      const other = await server.request(path, { headers: asCarol() });
      assert.equal(other.status, 200, path);
      assert.equal(decodeToken(sessionValue(other)).name, 'carol', path);
    }
  });

  test('R-STATE-2: [chttpd_auth] basic_auth_cookie = false sends no cookie after Basic', async () => {
    await withConfig(server, [['chttpd_auth', 'basic_auth_cookie', 'false']], async () => {
      const res = await whoAmI(server, asCarol());
      assertCarol(res);
      assertNoSetCookie(res);
      // A login still sets its cookie.
      sessionValue(await logIn(server, 'carol', 'carol-pw'));
    });
    sessionValue(await whoAmI(server, asCarol()));
  });

  test('R-VER-3: [couch_httpd_auth] basic_auth_cookie = false is honoured too', async () => {
    await withConfig(server, [['couch_httpd_auth', 'basic_auth_cookie', 'false']], async () => {
      const res = await whoAmI(server, asCarol());
      assertCarol(res);
      assertNoSetCookie(res);
    });
  });

  test('the Basic cookie follows the cookie settings (allow_persistent_cookies=false, timeout)', async () => {
    await withConfig(server, [['chttpd_auth', 'allow_persistent_cookies', 'false']], async () => {
      sessionValue(await whoAmI(server, asCarol()), {});
    });
    await withConfig(server, [['chttpd_auth', 'timeout', '120']], async () => {
      sessionValue(await whoAmI(server, asCarol()), { maxAge: 120 });
    });
  });

  test('`_:_`, no colon, an empty value and other schemes are "no credentials": anonymous', async () => {
    for (const authorization of [
      'Basic Xzpf',
      basic('_', '_'),
      `Basic ${Buffer.from('carolcarol-pw').toString('base64')}`,
      'Basic ',
      `basic ${Buffer.from('carol:carol-pw').toString('base64')}`,
      `BASIC ${Buffer.from('carol:carol-pw').toString('base64')}`,
      'annonymous',
      'Digest username="carol"',
    ]) {
      assertAnonymous(await whoAmI(server, { Authorization: authorization }));
    }
  });

  test('invalid base64 → 400 Authorization header has invalid base64 value', async () => {
    for (const authorization of ['Basic x', 'Basic XX=', 'Basic !!!!', 'Basic Y2Fyb2w6Y2Fyb2wtcHc=x']) {
      const res = await whoAmI(server, { Authorization: authorization });
      assert.equal(res.status, 400, authorization);
      assertJsonText(res, { error: 'bad_request', reason: 'Authorization header has invalid base64 value' });
      assertNoSetCookie(res);
    }
    const root = await server.request('/', { headers: { Authorization: 'Basic x' } });
    assert.equal(root.status, 400);
  });

  test('R-ERR-2: a wrong password, an unknown user or an empty name → 401 Name or password is incorrect., no cookie, no WWW-Authenticate', async () => {
    assertFailed(await whoAmI(server, asCarol('wrong')));
    assertFailed(await whoAmI(server, { Authorization: basic('nobody', 'x') }));
    assertFailed(await whoAmI(server, { Authorization: basic('', 'carol-pw') }));
    assertFailed(await server.request('/', { headers: asCarol('wrong') }));
    assertFailed(await server.request('/_up', { headers: asCarol('wrong') }));
  });

  test('the first colon splits: the password may contain colons', async () => {
    const eve = await whoAmI(server, { Authorization: basic('eve', 'p:w:d') });
    assert.equal(eve.status, 200);
    assertJsonText(eve, authenticatedSession('eve', [], 'default'));
    const foo = await whoAmI(server, { Authorization: `Basic ${Buffer.from('foo@example.org::bar').toString('base64')}` });
    assert.equal(foo.status, 200);
    assertJsonText(foo, authenticatedSession('foo@example.org', [], 'default'));
  });

  test('an empty password is a credential: `frank:` → frank; `carol:` → 401', async () => {
    const frank = await whoAmI(server, { Authorization: basic('frank', '') });
    assert.equal(frank.status, 200);
    assertJsonText(frank, authenticatedSession('frank', [], 'default'));
    assert.equal(decodeToken(sessionValue(frank)).name, 'frank');
    assertFailed(await whoAmI(server, { Authorization: basic('carol', '') }));
  });

  test('DESIGN §1: Basic credentials decide over a cookie of another user, in both directions', async () => {
    const carolCookie = await sessionCookie(server, 'carol', 'carol-pw');
    const davidCookie = await sessionCookie(server, 'david', 'david-pw');
    const asDavid = await whoAmI(server, { ...cookie(carolCookie), Authorization: basic('david', 'david-pw') });
    assert.equal(asDavid.status, 200);
    assertJsonText(asDavid, authenticatedSession('david', ['d'], 'default'));
    const davidToken = decodeToken(sessionValue(asDavid));
    assert.equal(davidToken.name, 'david', 'the fresh cookie names the Basic user');
    assert.equal(sessionValue(asDavid), handMadeCookie('david', davidToken.timeHex, secret, davidSalt));
    const asCarolNow = await whoAmI(server, { ...cookie(davidCookie), ...asCarol() });
    assertCarol(asCarolNow);
    assert.equal(decodeToken(sessionValue(asCarolNow)).name, 'carol');
  });

  test('DESIGN §1: a valid cookie never hides a wrong Basic password (same user or another) → 401', async () => {
    const carolCookie = await sessionCookie(server, 'carol', 'carol-pw');
    assertFailed(await whoAmI(server, { ...cookie(carolCookie), ...asCarol('wrong') }));
    assertFailed(await whoAmI(server, { ...cookie(carolCookie), Authorization: basic('david', 'wrong') }));
    assertFailed(await server.request('/', { headers: { ...cookie(carolCookie), ...asCarol('wrong') } }));
    // Without the Basic header the same cookie is fine.
    assertCarol(await whoAmI(server, cookie(carolCookie)), 'cookie');
  });

  test('`_:_` is no credential, so a cookie sent with it still authenticates', async () => {
    const carolCookie = await sessionCookie(server, 'carol', 'carol-pw');
    assertCarol(await whoAmI(server, { ...cookie(carolCookie), Authorization: 'Basic Xzpf' }), 'cookie');
  });

  test('an expired or tampered cookie with valid Basic → authenticated by Basic', async () => {
    const expired = mintCookieValue('carol', nowSeconds() - 700, secret, carolSalt, 'sha256');
    assertCarol(await whoAmI(server, { ...cookie(expired), ...asCarol() }));
    const tampered = Buffer.from(mintCookieValue('carol', nowSeconds(), secret, carolSalt, 'sha256'), 'base64url');
    tampered[tampered.length - 1] ^= 1;
    assertCarol(await whoAmI(server, { ...cookie(tampered.toString('base64url')), ...asCarol() }));
  });

  test('WWW-Authenticate: none by default; X-CouchDB-WWW-Authenticate is echoed on any 401', async () => {
    const plain = await server.request('/db');
    assert.equal(plain.status, 401);
    assertJsonText(plain, NOT_AUTHORIZED_DB);
    assert.equal(plain.headers['www-authenticate'], undefined);
    const echoed = await server.request('/db', { headers: { 'X-CouchDB-WWW-Authenticate': 'Cookie' } });
    assert.equal(echoed.status, 401);
    assert.equal(echoed.headers['www-authenticate'], 'Cookie');
    assertJsonText(echoed, NOT_AUTHORIZED_DB);
    const wrong = await whoAmI(server, { ...asCarol('wrong'), 'X-CouchDB-WWW-Authenticate': 'Cookie' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers['www-authenticate'], 'Cookie');
    assertJsonText(wrong, FAILED_LOGIN);
  });

  test('[chttpd] WWW-Authenticate adds that header to every 401; the request header still wins', async () => {
    await withConfig(server, [['chttpd', 'WWW-Authenticate', 'Basic realm="administrator"']], async () => {
      const wrong = await whoAmI(server, asCarol('wrong'));
      assert.equal(wrong.status, 401);
      assert.equal(wrong.headers['www-authenticate'], 'Basic realm="administrator"');
      const anonymous = await server.request('/db');
      assert.equal(anonymous.headers['www-authenticate'], 'Basic realm="administrator"');
      const requested = await server.request('/db', { headers: { 'X-CouchDB-WWW-Authenticate': 'Cookie' } });
      assert.equal(requested.headers['www-authenticate'], 'Cookie');
      const ok = await whoAmI(server, asCarol());
      assert.equal(ok.headers['www-authenticate'], undefined, 'only on 401s');
    });
  });

  test('a browser (text/html ranked above JSON) gets a 302 to the login page with return and reason, and the 401 body', async () => {
    const res = await server.request('/db', { headers: { Accept: BROWSER_ACCEPT } });
    assert.equal(res.status, 302);
    assert.equal(res.headers['location'], `${server.url}/_utils/session.html?return=%2Fdb&reason=You%20are%20not%20authorized%20to%20access%20this%20db.`);
    assertJsonText(res, NOT_AUTHORIZED_DB);
    const wrong = await server.request('/db', { headers: { Accept: 'text/html', ...asCarol('wrong') } });
    assert.equal(wrong.status, 302);
    assert.equal(wrong.headers['location'], `${server.url}/_utils/session.html?return=%2Fdb&reason=Name%20or%20password%20is%20incorrect.`);
    assertJsonText(wrong, FAILED_LOGIN);
  });

  test('the login-page redirect encodes the path CouchDB\'s way and honours [chttpd_auth] authentication_redirect', async () => {
    const path = await server.request('/db/_all_docs', { headers: { Accept: BROWSER_ACCEPT } });
    assert.equal(path.status, 302);
    assert.equal(path.headers['location'], `${server.url}/_utils/session.html?return=%2Fdb%2F_all_docs&reason=You%20are%20not%20authorized%20to%20access%20this%20db.`);
    await withConfig(server, [['chttpd_auth', 'authentication_redirect', '/login']], async () => {
      const res = await server.request('/db', { headers: { Accept: BROWSER_ACCEPT } });
      assert.equal(res.status, 302);
      assert.equal(res.headers['location'], `${server.url}/login?return=%2Fdb&reason=You%20are%20not%20authorized%20to%20access%20this%20db.`);
    });
  });

  test('API clients (*/*, application/json, no Accept, JSON ranked first) get the 401 JSON, no redirect', async () => {
    for (const accept of ['*/*', 'application/json', undefined, 'application/json,text/html;q=0.9', 'application/*']) {
      const res = await server.request('/db', { headers: accept === undefined ? {} : { Accept: accept } });
      assert.equal(res.status, 401, String(accept));
      assertJsonText(res, NOT_AUTHORIZED_DB);
      assert.equal(res.headers['location'], undefined);
    }
  });

  test('X-CouchDB-WWW-Authenticate takes precedence over the browser redirect', async () => {
    const res = await server.request('/db', { headers: { Accept: BROWSER_ACCEPT, 'X-CouchDB-WWW-Authenticate': 'Cookie' } });
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Cookie');
    assert.equal(res.headers['location'], undefined);
  });
});

describe('Basic authentication: PBKDF2 does not block other requests', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI });
    await createUser(server, 'carol', 'carol-pw', ['c']);
    // 600000 iterations of PBKDF2-SHA256, CouchDB 3.4's default, computed here.
    await createHashedUser(server, 'slow', await pbkdf2Fields('slow-pw', randomBytes(16).toString('hex'), 600000));
  });
  after(async () => server.close());

  test('R-BASIC-3: cookie requests answer while 4 wrong-password logins of a 600000-iteration user are being hashed', async () => {
    const carolCookie = await sessionCookie(server, 'carol', 'carol-pw');
    let firstLoginDone: number | undefined;
    const logins = ['w1', 'w2', 'w3', 'w4'].map((password) =>
      logIn(server, 'slow', password).then((res) => {
        firstLoginDone ??= performance.now();
        return res;
      }),
    );
    // Let the logins reach the server and start hashing.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const cookieDone: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await whoAmI(server, cookie(carolCookie));
      assert.equal(res.status, 200);
      assertJsonText(res, authenticatedSession('carol', ['c'], 'cookie'));
      cookieDone.push(performance.now());
      assert.equal(firstLoginDone, undefined, `cookie request ${i + 1} answered before any login finished`);
    }
    for (const res of await Promise.all(logins)) {
      assert.equal(res.status, 401);
      assertJsonText(res, FAILED_LOGIN);
    }
    assert.ok(cookieDone.every((at) => at < firstLoginDone!), 'every cookie request completed before the first login');
  });
});
