// The end of the handler chain and require_valid_user: reference §1.1, §1.3, §1.4 (truth table),
// §4.2–4.3, §9.2, §11, §14 (items 60, 68, 69); spec §7.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import type { HttpResponse } from '../support/http.js';
import {
  AUTH_REQUIRED,
  BROWSER_ACCEPT,
  FAILED_LOGIN,
  FAST_INI,
  MALFORMED_COOKIE,
  assertClearingCookie,
  assertJsonText,
  assertNoSetCookie,
  authenticatedSession,
  basic,
  cookie,
  createUser,
  handMadeCookie,
  hexTime,
  logIn,
  nowSeconds,
  serverSecret,
  sessionCookie,
  sessionValue,
  whoAmI,
  withConfig,
} from '../support/session-helpers.js';

const CHALLENGE = 'Basic realm="server"';

describe('require_valid_user and the end of the chain', () => {
  let server: TestServer;
  let ginaSalt: string;

  const requireValidUser = (rvu: boolean, rvuUp: boolean): Array<[string, string, string]> => [
    ['chttpd', 'require_valid_user', String(rvu)],
    ['chttpd', 'require_valid_user_except_for_up', String(rvuUp)],
  ];

  function assertRequired(res: HttpResponse, challenge: string | undefined, what: string): void {
    assert.equal(res.status, 401, `${what}: ${res.text}`);
    assertJsonText(res, AUTH_REQUIRED);
    assert.equal(res.headers['www-authenticate'], challenge, `${what}: WWW-Authenticate`);
    assertNoSetCookie(res);
  }

  before(async () => {
    server = await startServer({ ini: FAST_INI });
    ginaSalt = await createUser(server, 'gina', 'gina-pw', ['g']);
    await serverSecret(server);
  });
  after(async () => server.close());

  test('reference §1.4 truth table: rvu / rvu_except_for_up decide which of /_up and / need authentication', async () => {
    const table: Array<[boolean, boolean, boolean, boolean]> = [
      // rvu, rvu_up, /_up needs auth, other paths need auth
      [false, false, false, false],
      [false, true, false, true],
      [true, false, true, true],
      [true, true, false, true],
    ];
    for (const [rvu, rvuUp, upNeedsAuth, othersNeedAuth] of table) {
      await withConfig(server, requireValidUser(rvu, rvuUp), async () => {
        // Only require_valid_user itself adds the Basic challenge (rvu_up alone does not).
        const challenge = rvu ? CHALLENGE : undefined;
        const label = `rvu=${rvu} rvu_up=${rvuUp}`;
        const up = await server.request('/_up');
        if (upNeedsAuth) assertRequired(up, challenge, `${label} /_up`);
        else assert.equal(up.status, 200, `${label} /_up`);
        for (const path of ['/', '/_session', '/_uuids']) {
          const res = await server.request(path);
          if (othersNeedAuth) assertRequired(res, challenge, `${label} ${path}`);
          else assert.equal(res.status, 200, `${label} ${path}`);
        }
        // Credentials always pass.
        const withCredentials = await server.request('/_up', { headers: { Authorization: basic('gina', 'gina-pw') } });
        assert.equal(withCredentials.status, 200, `${label} /_up with Basic`);
      });
    }
  });

  test('require_valid_user: POST /_session stays open, so users can log in; its 401 has no challenge', async () => {
    await withConfig(server, requireValidUser(true, false), async () => {
      const login = await logIn(server, 'gina', 'gina-pw');
      assert.equal(login.status, 200);
      assertJsonText(login, { ok: true, name: 'gina', roles: ['g'] });
      sessionValue(login);
      const admin = await logIn(server, 'root', 'r00t-pass');
      assert.equal(admin.status, 200);
      assertJsonText(admin, { ok: true, name: 'root', roles: ['_admin'] });
      const wrong = await logIn(server, 'gina', 'wrong');
      assert.equal(wrong.status, 401);
      assertJsonText(wrong, FAILED_LOGIN);
      assert.equal(wrong.headers['www-authenticate'], undefined);
      assertClearingCookie(wrong);
    });
  });

  test('require_valid_user: anonymous GET, HEAD and DELETE /_session → 401 Authentication required. with WWW-Authenticate: Basic realm="server"', async () => {
    await withConfig(server, requireValidUser(true, false), async () => {
      assertRequired(await server.request('/_session'), CHALLENGE, 'GET');
      assertRequired(await server.request('/_session', { method: 'DELETE' }), CHALLENGE, 'DELETE');
      const head = await server.request('/_session', { method: 'HEAD' });
      assert.equal(head.status, 401);
      assert.equal(head.headers['www-authenticate'], CHALLENGE);
      // `_:_` is "no credentials".
      assertRequired(await server.request('/_session', { headers: { Authorization: 'Basic Xzpf' } }), CHALLENGE, '_:_');
    });
  });

  test('require_valid_user: a cookie or Basic authenticates; a wrong password gets 401 with the challenge', async () => {
    const value = await sessionCookie(server, 'gina', 'gina-pw');
    await withConfig(server, requireValidUser(true, false), async () => {
      const viaCookie = await whoAmI(server, cookie(value));
      assert.equal(viaCookie.status, 200);
      assertJsonText(viaCookie, authenticatedSession('gina', ['g'], 'cookie'));
      const viaBasic = await whoAmI(server, { Authorization: basic('gina', 'gina-pw') });
      assert.equal(viaBasic.status, 200);
      assertJsonText(viaBasic, authenticatedSession('gina', ['g'], 'default'));
      const logout = await server.request('/_session', { method: 'DELETE', headers: cookie(value) });
      assert.equal(logout.status, 200);
      assertClearingCookie(logout);
      const wrong = await whoAmI(server, { Authorization: basic('gina', 'wrong') });
      assert.equal(wrong.status, 401);
      assertJsonText(wrong, FAILED_LOGIN);
      assert.equal(wrong.headers['www-authenticate'], CHALLENGE);
    });
  });

  test('require_valid_user: an expired cookie is anonymous → 401 Authentication required.', async () => {
    await withConfig(server, requireValidUser(true, false), async () => {
      const secret = await serverSecret(server);
      const expired = handMadeCookie('gina', hexTime(nowSeconds() - 700), secret, ginaSalt);
      assertRequired(await server.request('/', { headers: cookie(expired) }), CHALLENGE, 'expired cookie');
    });
  });

  test('require_valid_user: a browser gets the Basic challenge, not the login-page redirect', async () => {
    await withConfig(server, requireValidUser(true, false), async () => {
      const res = await server.request('/', { headers: { Accept: BROWSER_ACCEPT } });
      assertRequired(res, CHALLENGE, 'browser');
      assert.equal(res.headers['location'], undefined);
    });
  });

  test('require_valid_user: X-CouchDB-WWW-Authenticate, then [chttpd] WWW-Authenticate, replace the challenge', async () => {
    await withConfig(server, requireValidUser(true, false), async () => {
      assertRequired(await server.request('/', { headers: { 'X-CouchDB-WWW-Authenticate': 'Cookie' } }), 'Cookie', 'request header');
      await withConfig(server, [['chttpd', 'WWW-Authenticate', 'Cookie realm="configured"']], async () => {
        assertRequired(await server.request('/'), 'Cookie realm="configured"', 'config');
        assertRequired(await server.request('/', { headers: { 'X-CouchDB-WWW-Authenticate': 'Other' } }), 'Other', 'request header wins');
      });
    });
  });

  test('require_valid_user: a hand-built cookie with a listed algorithm opens GET /; an unlisted one does not (CouchDB eunit)', async () => {
    const secret = await serverSecret(server);
    await withConfig(server, [...requireValidUser(true, false), ['chttpd_auth', 'hash_algorithms', 'sha256, sha512, sha, blake2s']], async () => {
      for (const algorithm of ['sha256', 'sha512', 'sha', 'blake2s']) {
        const res = await server.request('/', { headers: cookie(handMadeCookie('gina', hexTime(nowSeconds()), secret, ginaSalt, algorithm)) });
        assert.equal(res.status, 200, algorithm);
      }
      for (const algorithm of ['md5']) {
        const res = await server.request('/', { headers: cookie(handMadeCookie('gina', hexTime(nowSeconds()), secret, ginaSalt, algorithm)) });
        assertRequired(res, CHALLENGE, algorithm);
      }
    });
  });

  test('reference §9.2: [httpd] WWW-Authenticate is the fallback of [chttpd] WWW-Authenticate', async () => {
    await withConfig(server, [['httpd', 'WWW-Authenticate', 'Basic realm="legacy"']], async () => {
      const res = await whoAmI(server, { Authorization: basic('gina', 'wrong') });
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Basic realm="legacy"');
    });
  });

  test('authentication runs for every path: wrong Basic → 401 and a broken cookie → 400 on /, /_up, /_session, /_utils/', async () => {
    for (const path of ['/', '/_up', '/_session', '/_utils/', '/_uuids']) {
      const wrong = await server.request(path, { headers: { Authorization: basic('gina', 'wrong') } });
      assert.equal(wrong.status, 401, path);
      assertJsonText(wrong, FAILED_LOGIN);
      const broken = await server.request(path, { headers: cookie('!!!!') });
      assert.equal(broken.status, 400, path);
      assertJsonText(broken, MALFORMED_COOKIE);
    }
  });

  test('R-METH-3: whatever the handler order, Basic credentials decide and a cookie alone authenticates', async () => {
    const ginaCookie = await sessionCookie(server, 'gina', 'gina-pw');
    for (const handlers of [
      '{chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}',
      '{chttpd_auth, default_authentication_handler}, {chttpd_auth, cookie_authentication_handler}',
    ]) {
      await withConfig(server, [['chttpd', 'authentication_handlers', handlers]], async () => {
        const names = handlers.startsWith('{chttpd_auth, cookie') ? ['cookie', 'default'] : ['default', 'cookie'];
        assertJsonText(await whoAmI(server, cookie(ginaCookie)), authenticatedSession('gina', ['g'], 'cookie', names));
        const admin = await whoAmI(server, { ...cookie(ginaCookie), Authorization: basic('root', 'r00t-pass') });
        assertJsonText(admin, authenticatedSession('root', ['_admin'], 'default', names));
        const wrong = await whoAmI(server, { ...cookie(ginaCookie), Authorization: basic('gina', 'wrong') });
        assert.equal(wrong.status, 401);
        assertJsonText(wrong, FAILED_LOGIN);
      });
    }
  });
});
