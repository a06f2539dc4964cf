// AuthSession cookies: spec §2.3, §3, §5.2, §8; reference §3 (token, secret, validation, refresh,
// Set-Cookie format), §1.3 (chain semantics), §11; DESIGN §1 (persistent cookies by default), §9.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { mintCookieValue } from '../../src/auth/cookie/codec.js';
import { startServer, type TestServer } from '../support/server.js';
import type { HttpResponse } from '../support/http.js';
import {
  FAST_INI,
  MALFORMED_COOKIE,
  NOT_SERVER_ADMIN,
  adminSalt,
  anonymousSession,
  assertAuthSessionCookie,
  assertClearingCookie,
  assertJsonText,
  assertNoSetCookie,
  authSessionHeader,
  authenticatedSession,
  basic,
  cookie,
  createHashedUser,
  createUser,
  decodeToken,
  getConfig,
  handMadeCookie,
  hexTime,
  logIn,
  nowSeconds,
  putConfig,
  serverSecret,
  sessionCookie,
  sessionValue,
  sleep,
  userDoc,
  whoAmI,
  withConfig,
} from '../support/session-helpers.js';

describe('AuthSession cookies', () => {
  let server: TestServer;
  let secret: string;
  let rootSalt: string;
  let bobSalt: string;

  /** A bob cookie issued `age` seconds ago, signed like the server signs. */
  const bobCookie = (age = 0, options: { salt?: string; secretOverride?: string } = {}): string =>
    mintCookieValue('bob', nowSeconds() - age, options.secretOverride ?? secret, options.salt ?? bobSalt, 'sha256');
  const rootCookie = (age = 0): string => mintCookieValue('root', nowSeconds() - age, secret, rootSalt, 'sha256');

  function assertBob(res: HttpResponse, roles = ['b']): void {
    assert.equal(res.status, 200, res.text);
    assertJsonText(res, authenticatedSession('bob', roles, 'cookie'));
  }
  function assertAnonymous(res: HttpResponse): void {
    assert.equal(res.status, 200, res.text);
    assertJsonText(res, anonymousSession());
    assertNoSetCookie(res);
  }
  function assertMalformed(res: HttpResponse, what: string): void {
    assert.equal(res.status, 400, `${what}: ${res.text}`);
    assertJsonText(res, MALFORMED_COOKIE);
    assertNoSetCookie(res);
  }

  before(async () => {
    server = await startServer({ ini: FAST_INI });
    bobSalt = await createUser(server, 'bob', 'bob-pw', ['b']);
    secret = await serverSecret(server);
    rootSalt = await adminSalt(server);
  });
  after(async () => server.close());

  test('R-COOKIE-1 R-CK-2: a token built from secret, salt and time alone (no server state) authenticates', async () => {
    const value = bobCookie();
    const t = decodeToken(value);
    assert.equal(value, handMadeCookie('bob', t.timeHex, secret, bobSalt), 'the codec agrees with reference §3.1');
    assertBob(await whoAmI(server, cookie(value)));
    const admin = await server.request('/_node/_local/_config/couchdb/default_security', { headers: cookie(rootCookie()) });
    assert.equal(admin.status, 200);
    assert.equal(admin.body, 'admin_only');
  });

  test('R-STATE-3: a cookie younger than 10 % of timeout gets no Set-Cookie, on any path', async () => {
    for (const age of [0, 30]) {
      const res = await whoAmI(server, cookie(bobCookie(age)));
      assertBob(res);
      assertNoSetCookie(res, `age ${age}`);
    }
    for (const path of ['/', '/_up', '/no_such_db']) {
      const res = await server.request(path, { headers: cookie(rootCookie(30)) });
      assert.ok(res.status === 200 || res.status === 404, `${path}: ${res.status}`);
      assertNoSetCookie(res, path);
    }
  });

  test('R-STATE-3: once more than 10 % of timeout has passed, every response carries a fresh cookie, errors included', async () => {
    await withConfig(server, [['chttpd_auth', 'timeout', '100']], async () => {
      const young = await whoAmI(server, cookie(bobCookie(5)));
      assertBob(young);
      assertNoSetCookie(young, '5 s of 100 is under 10 %');

      const res = await whoAmI(server, cookie(bobCookie(30)));
      assertBob(res);
      const fresh = assertAuthSessionCookie(authSessionHeader(res), { maxAge: 100 });
      const token = decodeToken(fresh);
      assert.equal(token.name, 'bob');
      assert.ok(Math.abs(token.time - nowSeconds()) <= 2, 'the fresh cookie carries the current time');
      assert.equal(fresh, handMadeCookie('bob', token.timeHex, secret, bobSalt));
      assertBob(await whoAmI(server, cookie(fresh)));

      const missing = await server.request('/no_such_db', { headers: cookie(rootCookie(30)) });
      assert.equal(missing.status, 404);
      assertJsonText(missing, { error: 'not_found', reason: 'Database does not exist.' });
      assert.equal(decodeToken(assertAuthSessionCookie(authSessionHeader(missing), { maxAge: 100 })).name, 'root');

      const forbidden = await server.request('/_node/_local/_config', { headers: cookie(bobCookie(30)) });
      assert.equal(forbidden.status, 401);
      assertJsonText(forbidden, NOT_SERVER_ADMIN);
      assert.equal(decodeToken(assertAuthSessionCookie(authSessionHeader(forbidden), { maxAge: 100 })).name, 'bob');
    });
  });

  test('R-STATE-3: a login or logout made with an old cookie carries only its own cookie', async () => {
    await withConfig(server, [['chttpd_auth', 'timeout', '100']], async () => {
      const login = await logIn(server, 'root', 'r00t-pass', { headers: cookie(bobCookie(50)) });
      assert.equal(login.status, 200);
      assert.equal(decodeToken(assertAuthSessionCookie(authSessionHeader(login), { maxAge: 100 })).name, 'root');
      const logout = await server.request('/_session', { method: 'DELETE', headers: cookie(bobCookie(50)) });
      assert.equal(logout.status, 200);
      assertClearingCookie(logout, { maxAge: 100 });
    });
  });

  test('R-COOKIE-3 R-LIMIT-1 R-STATE-4: by default a cookie is valid for 600 s (590 s old: valid; 610 s old: anonymous)', async () => {
    const valid = await whoAmI(server, cookie(bobCookie(590)));
    assertBob(valid);
    assertAuthSessionCookie(authSessionHeader(valid), { maxAge: 600 });
    assertAnonymous(await whoAmI(server, cookie(bobCookie(610))));
  });

  test('R-COOKIE-3 R-LIMIT-1 R-STATE-4: [chttpd_auth] timeout changes the validity and Max-Age, read at verification time', async () => {
    const issuedBefore = bobCookie(150);
    await withConfig(server, [['chttpd_auth', 'timeout', '100']], async () => {
      assertAnonymous(await whoAmI(server, cookie(issuedBefore)));
      assertBob(await whoAmI(server, cookie(bobCookie(90))));
      const login = await logIn(server, 'bob', 'bob-pw');
      assert.equal(login.status, 200);
      sessionValue(login, { maxAge: 100 });
    });
    assertBob(await whoAmI(server, cookie(issuedBefore)), ['b']);
  });

  test('R-STATE-4: an expired cookie makes the caller anonymous, not 401: a protected resource answers as for anyone', async () => {
    await withConfig(server, [['chttpd_auth', 'timeout', '100']], async () => {
      const res = await server.request('/_node/_local/_config', { headers: cookie(rootCookie(150)) });
      assert.equal(res.status, 401);
      assertJsonText(res, NOT_SERVER_ADMIN);
      assertNoSetCookie(res);
    });
  });

  test('R-VER-3: [couch_httpd_auth] timeout is honoured when [chttpd_auth] timeout is not set; [chttpd_auth] wins', async () => {
    await withConfig(server, [['couch_httpd_auth', 'timeout', '100']], async () => {
      assertAnonymous(await whoAmI(server, cookie(bobCookie(150))));
      const refreshed = await whoAmI(server, cookie(bobCookie(50)));
      assertBob(refreshed);
      assertAuthSessionCookie(authSessionHeader(refreshed), { maxAge: 100 });
      const login = await logIn(server, 'bob', 'bob-pw');
      sessionValue(login, { maxAge: 100 });
      await withConfig(server, [['chttpd_auth', 'timeout', '300']], async () => {
        sessionValue(await logIn(server, 'bob', 'bob-pw'), { maxAge: 300 });
        assertBob(await whoAmI(server, cookie(bobCookie(150))));
      });
    });
  });

  test('R-VER-3: [couch_httpd_auth] allow_persistent_cookies is honoured too', async () => {
    await withConfig(server, [['couch_httpd_auth', 'allow_persistent_cookies', 'false']], async () => {
      const login = await logIn(server, 'bob', 'bob-pw');
      sessionValue(login, {});
    });
  });

  test('a cookie with a time in the future is accepted and not refreshed', async () => {
    const res = await whoAmI(server, cookie(bobCookie(-1000)));
    assertBob(res);
    assertNoSetCookie(res);
  });

  test('a tampered MAC, name or time → anonymous, silently (no 400, no Set-Cookie)', async () => {
    const value = bobCookie();
    const bytes = Buffer.from(value, 'base64url');
    bytes[bytes.length - 1] ^= 0x01;
    assertAnonymous(await whoAmI(server, cookie(bytes.toString('base64url'))));
    const t = decodeToken(value);
    const asRoot = Buffer.concat([Buffer.from(`root:${t.timeHex}:`), t.mac]).toString('base64url');
    assertAnonymous(await whoAmI(server, cookie(asRoot)));
    const later = Buffer.concat([Buffer.from(`bob:${hexTime(t.time + 1000)}:`), t.mac]).toString('base64url');
    assertAnonymous(await whoAmI(server, cookie(later)));
    const otherSecret = bobCookie(0, { secretOverride: 'not-the-secret' });
    assertAnonymous(await whoAmI(server, cookie(otherSecret)));
  });

  test('not base64url, truncated, or fewer than 3 parts → 400 Malformed AuthSession cookie, on every path', async () => {
    const valid = bobCookie();
    const truncatedLength = valid.length - ((valid.length - 1) % 4);
    const cases: Array<[string, string]> = [
      ['!!!!', 'not base64url'],
      [`${valid}=`, 'padding'],
      [valid.replace(/[A-Za-z]/, '+'), 'standard alphabet'],
      [valid.slice(0, truncatedLength), 'truncated to 4n+1 characters'],
      [Buffer.from('bob:ABC').toString('base64url'), 'two parts'],
      [Buffer.from('bob').toString('base64url'), 'one part'],
      [Buffer.from('garbage-without-colons').toString('base64url'), 'no colon'],
    ];
    for (const [value, what] of cases) {
      assert.equal(value.length % 4 === 1 || what !== 'truncated to 4n+1 characters', true);
      assertMalformed(await whoAmI(server, cookie(value)), what);
    }
    for (const path of ['/', '/_up', '/_all_dbs']) {
      assertMalformed(await server.request(path, { headers: cookie('!!!!') }), path);
    }
  });

  test('a broken cookie is a 400 even when valid Basic credentials are sent too (reference §1.3)', async () => {
    for (const value of ['!!!!', Buffer.from('bob:ABC').toString('base64url')]) {
      const res = await whoAmI(server, { ...cookie(value), Authorization: basic('bob', 'bob-pw') });
      assertMalformed(res, value);
    }
  });

  test('three parts with a time that is not hex → anonymous; a lowercase hex time is accepted', async () => {
    assertAnonymous(await whoAmI(server, cookie(Buffer.from('bob::').toString('base64url'))));
    assertAnonymous(await whoAmI(server, cookie(handMadeCookie('bob', 'ZZ12', secret, bobSalt))));
    assertBob(await whoAmI(server, cookie(handMadeCookie('bob', hexTime(nowSeconds()).toLowerCase(), secret, bobSalt))));
  });

  test('an empty AuthSession value (the cleared cookie) is ignored', async () => {
    for (const header of ['AuthSession=', 'AuthSession', 'AuthSession=; other=1', 'other=1']) {
      assertAnonymous(await whoAmI(server, { Cookie: header }));
    }
  });

  test('only the first AuthSession in the Cookie header counts', async () => {
    const valid = bobCookie();
    assertBob(await whoAmI(server, { Cookie: `AuthSession=${valid}; AuthSession=!!!!` }));
    assertMalformed(await whoAmI(server, { Cookie: `AuthSession=!!!!; AuthSession=${valid}` }), 'first broken');
    assertBob(await whoAmI(server, { Cookie: `theme=dark; AuthSession=${valid}; lang=en` }));
  });

  test('a cookie of an unknown user → anonymous', async () => {
    assertAnonymous(await whoAmI(server, cookie(mintCookieValue('ghost', nowSeconds(), secret, '', 'sha256'))));
    assertAnonymous(await whoAmI(server, cookie(mintCookieValue('ghost', nowSeconds(), secret, bobSalt, 'sha256'))));
  });

  test('DESIGN §9: a SHA-1 cookie verifies with the default hash_algorithms (sha256, sha); md5, sha512, blake2s do not', async () => {
    const timeHex = hexTime(nowSeconds());
    assertBob(await whoAmI(server, cookie(handMadeCookie('bob', timeHex, secret, bobSalt, 'sha'))));
    for (const algorithm of ['md5', 'sha512', 'blake2s']) {
      assertAnonymous(await whoAmI(server, cookie(handMadeCookie('bob', timeHex, secret, bobSalt, algorithm))));
    }
  });

  test('hash_algorithms: the first entry signs new cookies, every listed one verifies', async () => {
    const timeHex = hexTime(nowSeconds());
    await withConfig(server, [['chttpd_auth', 'hash_algorithms', 'sha512, md5, blake2s']], async () => {
      const login = await logIn(server, 'bob', 'bob-pw');
      const token = decodeToken(sessionValue(login));
      assert.equal(token.mac.length, 64, 'signed with HMAC-SHA512');
      assert.equal(sessionValue(login), handMadeCookie('bob', token.timeHex, secret, bobSalt, 'sha512'));
      for (const algorithm of ['sha512', 'md5', 'blake2s']) {
        assertBob(await whoAmI(server, cookie(handMadeCookie('bob', timeHex, secret, bobSalt, algorithm))));
      }
      for (const algorithm of ['sha256', 'sha']) {
        assertAnonymous(await whoAmI(server, cookie(handMadeCookie('bob', timeHex, secret, bobSalt, algorithm))));
      }
    });
    await withConfig(server, [['chttpd_auth', 'hash_algorithms', 'sha']], async () => {
      const token = decodeToken(sessionValue(await logIn(server, 'bob', 'bob-pw')));
      assert.equal(token.mac.length, 20, 'signed with HMAC-SHA1');
    });
    const token = decodeToken(sessionValue(await logIn(server, 'bob', 'bob-pw')));
    assert.equal(token.mac.length, 32, 'back to HMAC-SHA256');
  });

  test('R-COOKIE-1: the worked vector of reference §3.1 is accepted as it is', async () => {
    const VECTOR_SECRET = '92de07df7e7a3fe14808cef90a7cc0d9';
    const VECTOR_SALT = '1112283cf988a34f124200a050d308a1';
    const VECTOR = 'amFuOjY1NTNGMTAwOhUqiDWcIRagJkRRogsXHjMEEKVcacSQgQ3hopraquz6';
    assert.equal(mintCookieValue('jan', 1700000000, VECTOR_SECRET, VECTOR_SALT, 'sha256'), VECTOR);
    assert.equal(handMadeCookie('jan', '6553F100', VECTOR_SECRET, VECTOR_SALT), VECTOR);
    // jan's password is `apple` (PBKDF2-SHA1, 10 iterations: reference §2.5).
    await createHashedUser(server, 'jan', { password_scheme: 'pbkdf2', salt: VECTOR_SALT, iterations: 10, derived_key: 'e579375db0e0c6a6fc79cd9e36a36859f71575c3' }, ['vector']);
    // Issued at 1700000000 (November 2023): a timeout of 2e9 s keeps it valid without a refresh.
    await withConfig(server, [['chttpd_auth', 'secret', VECTOR_SECRET], ['chttpd_auth', 'timeout', '2000000000']], async () => {
      const res = await whoAmI(server, cookie(VECTOR));
      assert.equal(res.status, 200);
      assertJsonText(res, authenticatedSession('jan', ['vector'], 'cookie'));
      assertNoSetCookie(res);
    });
    assert.equal(await getConfig(server, 'chttpd_auth', 'secret'), secret);
    assertAnonymous(await whoAmI(server, cookie(VECTOR)));
  });

  test('R-COOKIE-4 R-COOKIE-2 R-COOKIE-5: allow_persistent_cookies=false → exactly "AuthSession=<v>; Version=1; Path=/; HttpOnly"', async () => {
    await withConfig(server, [['chttpd_auth', 'allow_persistent_cookies', 'false']], async () => {
      const login = await logIn(server, 'bob', 'bob-pw');
      assert.equal(login.status, 200);
      const header = authSessionHeader(login);
      assert.match(header, /^AuthSession=[A-Za-z0-9_-]+; Version=1; Path=\/; HttpOnly$/);
      const failed = await logIn(server, 'bob', 'wrong');
      assert.equal(authSessionHeader(failed), 'AuthSession=; Version=1; Path=/; HttpOnly');
      const logout = await server.request('/_session', { method: 'DELETE' });
      assert.equal(authSessionHeader(logout), 'AuthSession=; Version=1; Path=/; HttpOnly');
    });
    // Back to the default: persistent.
    sessionValue(await logIn(server, 'bob', 'bob-pw'), { maxAge: 600 });
  });

  test('cookie_domain adds "; Domain=…" to login and logout cookies; unset adds nothing', async () => {
    await withConfig(server, [['chttpd_auth', 'cookie_domain', 'example.com']], async () => {
      sessionValue(await logIn(server, 'bob', 'bob-pw'), { maxAge: 600, domain: 'example.com' });
      assertClearingCookie(await server.request('/_session', { method: 'DELETE' }), { maxAge: 600, domain: 'example.com' });
    });
    // An empty value cannot be stored (CouchDB's ini reads `key =` as unset): unset is the empty case.
    await withConfig(server, [['chttpd_auth', 'cookie_domain', undefined]], async () => {
      sessionValue(await logIn(server, 'bob', 'bob-pw'), { maxAge: 600 });
    });
  });

  test('same_site None/Lax/Strict (any case) → "; SameSite=…" last; unset or invalid → none', async () => {
    // Unset stands for empty: `_config` cannot store an empty value (CouchDB's ini reads `key =` as unset).
    const cases: Array<[string | undefined, string | undefined]> = [
      ['None', 'None'],
      ['lax', 'Lax'],
      ['STRICT', 'Strict'],
      ['Strict', 'Strict'],
      [undefined, undefined],
      ['Invalid', undefined],
    ];
    for (const [setting, attribute] of cases) {
      await withConfig(server, [['chttpd_auth', 'same_site', setting]], async () => {
        const attributes = attribute === undefined ? { maxAge: 600 } : { maxAge: 600, sameSite: attribute };
        sessionValue(await logIn(server, 'bob', 'bob-pw'), attributes);
        assertClearingCookie(await server.request('/_session', { method: 'DELETE' }), attributes);
      });
    }
  });

  test('secure_cookie=true → "; Secure" on plain HTTP; the attribute order is mochiweb\'s', async () => {
    await withConfig(server, [['chttpd_auth', 'secure_cookie', 'true']], async () => {
      sessionValue(await logIn(server, 'bob', 'bob-pw'), { maxAge: 600, secure: true });
    });
    await withConfig(
      server,
      [
        ['chttpd_auth', 'secure_cookie', 'true'],
        ['chttpd_auth', 'cookie_domain', 'example.com'],
        ['chttpd_auth', 'same_site', 'strict'],
      ],
      async () => {
        const header = authSessionHeader(await logIn(server, 'bob', 'bob-pw'));
        assert.match(header, /^AuthSession=[A-Za-z0-9_-]+; Version=1; Expires=[^;]+ GMT; Max-Age=600; Secure; Domain=example\.com; Path=\/; HttpOnly; SameSite=Strict$/);
      },
    );
    sessionValue(await logIn(server, 'bob', 'bob-pw'), { maxAge: 600 });
  });

  test('roles are re-read on every request; a user password change (new salt) ends that user\'s cookies', async () => {
    const salt = await createUser(server, 'carl', 'carl-pw', ['one']);
    const value = await sessionCookie(server, 'carl', 'carl-pw');
    const doc = await userDoc(server, 'carl');
    const update = await server.admin('/_users/org.couchdb.user:carl', { method: 'PUT', body: { ...doc, roles: ['one', 'two'] } });
    assert.equal(update.status, 201, update.text);
    const session = await whoAmI(server, cookie(value));
    assertJsonText(session, authenticatedSession('carl', ['one', 'two'], 'cookie'));
    const changed = await server.admin('/_users/org.couchdb.user:carl', { method: 'PUT', body: { ...(await userDoc(server, 'carl')), password: 'carl-new' } });
    assert.equal(changed.status, 201, changed.text);
    assert.notEqual((await userDoc(server, 'carl'))['salt'], salt);
    assertAnonymous(await whoAmI(server, cookie(value)));
  });

  test('an admin password change through _config/admins (new salt) ends the admin\'s cookies', async () => {
    const old = await sessionCookie(server, 'root', 'r00t-pass');
    const oldSalt = await adminSalt(server);
    const res = await server.admin('/_node/_local/_config/admins/root', { method: 'PUT', body: '"r00t-pass"' });
    assert.equal(res.status, 200);
    await server.app.services.admins.settled();
    const newSalt = await adminSalt(server);
    assert.notEqual(newSalt, oldSalt);
    rootSalt = newSalt;
    assertAnonymous(await whoAmI(server, cookie(old)));
    const fresh = await sessionCookie(server, 'root', 'r00t-pass');
    assertJsonText(await whoAmI(server, cookie(fresh)), authenticatedSession('root', ['_admin'], 'cookie'));
  });

  test('rotating [chttpd_auth] secret keeps older cookies valid for `timeout` seconds; new cookies use the new secret', async () => {
    const before = bobCookie();
    await withConfig(server, [['chttpd_auth', 'secret', 'second-secret-0123456789abcdef']], async () => {
      assertBob(await whoAmI(server, cookie(before)));
      const login = await logIn(server, 'bob', 'bob-pw');
      const value = sessionValue(login);
      assert.equal(value, handMadeCookie('bob', decodeToken(value).timeHex, 'second-secret-0123456789abcdef', bobSalt));
      await withConfig(server, [['chttpd_auth', 'timeout', '2']], async () => {
        // Future-dated, so only the grace period of the replaced secret can end them.
        const signedWithSecond = handMadeCookie('bob', hexTime(nowSeconds() + 1000), 'second-secret-0123456789abcdef', bobSalt);
        await putConfig(server, 'chttpd_auth', 'secret', 'third-secret-0123456789abcdef');
        assertBob(await whoAmI(server, cookie(signedWithSecond)));
        await sleep(2600);
        assertAnonymous(await whoAmI(server, cookie(signedWithSecond)));
        assertBob(await whoAmI(server, cookie(handMadeCookie('bob', hexTime(nowSeconds() + 1000), 'third-secret-0123456789abcdef', bobSalt))));
      });
    });
    assert.equal(await getConfig(server, 'chttpd_auth', 'secret'), secret);
    assertBob(await whoAmI(server, cookie(bobCookie())));
  });
});

describe('AuthSession cookies without a secret', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI });
  });
  after(async () => server.close());

  test('while no secret is configured every cookie is ignored; once it is set, the same cookie works', async () => {
    assert.equal(server.app.config.get('chttpd_auth', 'secret'), undefined);
    const salt = server.app.config.get('admins', 'root')!.split(',')[1]!;
    const value = mintCookieValue('root', nowSeconds(), 'chosen-secret-0123456789', salt, 'sha256');
    const res = await whoAmI(server, cookie(value));
    assert.equal(res.status, 200);
    assertJsonText(res, anonymousSession());
    assertNoSetCookie(res);
    // A broken cookie is still refused: decoding comes before the secret.
    const broken = await whoAmI(server, cookie('!!!!'));
    assert.equal(broken.status, 400);
    assertJsonText(broken, MALFORMED_COOKIE);
    await putConfig(server, 'chttpd_auth', 'secret', 'chosen-secret-0123456789');
    assertJsonText(await whoAmI(server, cookie(value)), authenticatedSession('root', ['_admin'], 'cookie'));
  });
});

describe('AuthSession cookies across a restart', () => {
  test('R-COOKIE-1: the token carries no server-side state: a cookie issued before a restart is accepted after it', async () => {
    const first = await startServer({ ini: FAST_INI, keepData: true });
    let second: TestServer | undefined;
    let firstOpen = true;
    try {
      const value = await sessionCookie(first, 'root', 'r00t-pass');
      await first.close();
      firstOpen = false;
      second = await startServer({ dataDir: first.dataDir });
      const res = await whoAmI(second, cookie(value));
      assert.equal(res.status, 200);
      assertJsonText(res, authenticatedSession('root', ['_admin'], 'cookie'));
    } finally {
      if (firstOpen) await first.close();
      await second?.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
