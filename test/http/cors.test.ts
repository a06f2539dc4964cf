// CORS over HTTP: [chttpd] enable_cors and [cors] (CouchDB's chttpd_cors.erl), preflights answered
// before authentication (reference §1.1), CORS headers on every reply to an allowed origin.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { HttpResponse } from '../support/http.js';
import { startServer, type TestServer } from '../support/server.js';
import { FAST_INI, basic, cookie, createUser, logIn, putConfig, sessionValue, setCookies, withConfig } from '../support/session-helpers.js';

const APP = 'http://app.example';
const OTHER = 'https://other.example:8443';
const EVIL = 'http://evil.example';
const COUCH_METHODS = 'CONNECT, COPY, DELETE, GET, HEAD, OPTIONS, POST, PUT, TRACE';
const JSON_EXPOSED = 'content-type, cache-control, accept-ranges, etag, server, x-couch-request-id, x-couch-update-newrev, x-couchdb-body-time';
const ALICE_PW = 'alice-pw';

function corsHeaders(res: HttpResponse): Record<string, unknown> {
  return Object.fromEntries(Object.entries(res.headers).filter(([name]) => name.startsWith('access-control-')));
}

function assertNoCors(res: HttpResponse, what: string): void {
  assert.deepEqual(corsHeaders(res), {}, `${what}: no Access-Control-* headers (${res.status} ${res.text})`);
}

function assertActualCors(res: HttpResponse, origin: string, credentials: boolean): void {
  assert.equal(res.headers['access-control-allow-origin'], origin, `${res.status} ${res.text}`);
  assert.equal(res.headers['access-control-allow-credentials'], credentials ? 'true' : undefined);
  assert.equal(res.headers['access-control-expose-headers'], JSON_EXPOSED);
  assert.equal(res.headers['vary'], 'Origin');
  assert.equal(res.headers['access-control-allow-methods'], undefined, 'Allow-Methods is for preflights only');
}

describe('CORS', () => {
  let server: TestServer;

  const preflight = (path: string, origin: string, method: string, requestHeaders?: string, extra: Record<string, string> = {}): Promise<HttpResponse> =>
    server.request(path, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': method, ...(requestHeaders === undefined ? {} : { 'Access-Control-Request-Headers': requestHeaders }), ...extra },
    });

  before(async () => {
    server = await startServer({ ini: `${FAST_INI}[chttpd]\nenable_cors = true\n[cors]\norigins = ${APP}, ${OTHER}\ncredentials = true\n` });
    await createUser(server, 'alice', ALICE_PW);
    assert.equal((await server.admin('/members', { method: 'PUT' })).status, 201);
    const security = await server.admin('/members/_security', { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: ['alice'], roles: [] } } });
    assert.equal(security.status, 200, security.text);
    assert.equal((await server.admin('/members/secret', { method: 'PUT', body: { text: 'members only' } })).status, 201);
  });
  after(async () => server.close());

  describe('preflight', () => {
    test('POST /_session from an allowed origin: 204 before the handler, with CouchDB headers and the origin itself', async () => {
      const res = await preflight('/_session', APP, 'POST', 'content-type');
      assert.equal(res.status, 204);
      assert.equal(res.text, '');
      assert.deepEqual(corsHeaders(res), {
        'access-control-allow-origin': APP,
        'access-control-max-age': '600',
        'access-control-allow-methods': COUCH_METHODS,
        'access-control-allow-credentials': 'true',
        'access-control-allow-headers': 'content-type',
      });
      assert.equal(res.headers['vary'], 'Origin');
      assert.match(String(res.headers['x-couch-request-id']), /^[0-9a-f]{12}$/);
      assert.match(String(res.headers['server']), /^Divan\//);
      assert.equal(res.headers['content-type'], undefined, 'a 204 has no Content-Type');
      assert.equal(res.headers['content-length'], undefined, 'a 204 has no Content-Length');
      assert.equal(res.headers['set-cookie'], undefined);
    });

    test('the preflight for a PouchDB request with Basic credentials lists the headers as asked', async () => {
      const res = await preflight('/members/_all_docs', OTHER, 'GET', 'accept,authorization,content-type');
      assert.equal(res.status, 204);
      assert.equal(res.headers['access-control-allow-origin'], OTHER);
      assert.equal(res.headers['access-control-allow-headers'], 'accept,authorization,content-type');
    });

    test('answered even with require_valid_user on and bad credentials attached; the same OPTIONS without Access-Control-Request-Method is authenticated', async () => {
      await withConfig(server, [['chttpd', 'require_valid_user', 'true']], async () => {
        const bad = { Authorization: basic('alice', 'wrong'), Cookie: 'AuthSession=garbage' };
        const res = await preflight('/members/secret', APP, 'PUT', 'content-type', bad);
        assert.equal(res.status, 204, res.text);
        assert.equal(res.headers['access-control-allow-origin'], APP);
        assert.equal(res.headers['www-authenticate'], undefined);
        // Not a preflight: the normal pipeline, where require_valid_user refuses it, with the CORS
        // headers of an actual request so the app can read the 401.
        const plain = await server.request('/members/secret', { method: 'OPTIONS', headers: { Origin: APP } });
        assert.equal(plain.status, 401, plain.text);
        assertActualCors(plain, APP, true);
        const noOrigin = await server.request('/_session', { method: 'OPTIONS', headers: { 'Access-Control-Request-Method': 'POST' } });
        assert.equal(noOrigin.status, 401, noOrigin.text);
        assertNoCors(noOrigin, 'no Origin');
      });
    });

    test('a refused origin gets no CORS headers and goes through the normal pipeline', async () => {
      const res = await preflight('/_session', EVIL, 'POST', 'content-type');
      assert.equal(res.status, 405, res.text);
      assertNoCors(res, 'refused origin');
      assert.equal(res.headers['vary'], 'Origin');
    });

    test('origins match exactly: case, scheme and port count, a trailing slash does not match', async () => {
      for (const origin of ['http://APP.example', 'https://app.example', 'http://app.example:80', `${APP}/`, 'https://other.example', 'null']) {
        assertNoCors(await preflight('/_session', origin, 'POST'), origin);
      }
    });

    test('a method or a request header not allowed gets no CORS headers (CouchDB would still send Allow-Origin)', async () => {
      await withConfig(server, [['cors', 'methods', 'GET, POST']], async () => {
        const put = await preflight('/members/secret', APP, 'PUT');
        assert.notEqual(put.status, 204);
        assertNoCors(put, 'method PUT');
        const post = await preflight('/members/secret', APP, 'POST');
        assert.equal(post.status, 204);
        assert.equal(post.headers['access-control-allow-methods'], 'GET, POST');
      });
      const header = await preflight('/_session', APP, 'POST', 'content-type, x-not-allowed');
      assert.equal(header.status, 405, header.text);
      assertNoCors(header, 'header x-not-allowed');
    });

    test('headers and max_age are read live; custom headers replace the default list', async () => {
      await withConfig(server, [['cors', 'headers', 'X-Extra, Content-Type'], ['cors', 'max_age', '3600']], async () => {
        const res = await preflight('/_session', APP, 'POST', 'x-extra,content-type');
        assert.equal(res.status, 204);
        assert.equal(res.headers['access-control-allow-headers'], 'x-extra,content-type');
        assert.equal(res.headers['access-control-max-age'], '3600');
        assertNoCors(await preflight('/_session', APP, 'POST', 'authorization'), 'authorization no longer listed');
      });
      const restored = await preflight('/_session', APP, 'POST', 'authorization');
      assert.equal(restored.status, 204);
      assert.equal(restored.headers['access-control-max-age'], '600');
    });
  });

  describe('actual requests', () => {
    test('login with credentials from an allowed origin: readable 200 with the cookie; the cookie then reads a members-only document', async () => {
      const login = await logIn(server, 'alice', ALICE_PW, { headers: { Origin: APP } });
      assert.equal(login.status, 200, login.text);
      assertActualCors(login, APP, true);
      const value = sessionValue(login);
      const doc = await server.request('/members/secret', { headers: { Origin: APP, ...cookie(value) } });
      assert.equal(doc.status, 200, doc.text);
      assert.equal(doc.body.text, 'members only');
      assertActualCors(doc, APP, true);
      assert.ok(doc.headers['etag'], 'the ETag a PouchDB app reads is there');
    });

    test('error replies carry the CORS headers too: 401 from a bad login, 401 from the database, 404, 400', async () => {
      const badLogin = await logIn(server, 'alice', 'wrong', { headers: { Origin: APP } });
      assert.equal(badLogin.status, 401);
      assertActualCors(badLogin, APP, true);
      const anonymous = await server.request('/members/secret', { headers: { Origin: APP } });
      assert.equal(anonymous.status, 401, anonymous.text);
      assertActualCors(anonymous, APP, true);
      const missing = await server.request('/members/nothing', { headers: { Origin: APP, Authorization: basic('alice', ALICE_PW) } });
      assert.equal(missing.status, 404);
      assertActualCors(missing, APP, true);
      const badUrl = await server.request('/members/%ZZ', { headers: { Origin: APP } });
      assert.equal(badUrl.status, 400);
      assertActualCors(badUrl, APP, true);
    });

    test('a refused origin gets no CORS headers on success or error, only Vary: Origin', async () => {
      const welcome = await server.request('/', { headers: { Origin: EVIL } });
      assert.equal(welcome.status, 200);
      assertNoCors(welcome, 'GET / from a refused origin');
      assert.equal(welcome.headers['vary'], 'Origin');
      const login = await logIn(server, 'alice', ALICE_PW, { headers: { Origin: EVIL } });
      assert.equal(login.status, 200, 'CORS is enforced by the browser; the server still answers');
      assertNoCors(login, 'login from a refused origin');
      const twoOrigins = await server.request('/', { headers: { Origin: [APP, EVIL] } });
      assertNoCors(twoOrigins, 'two Origin headers');
    });

    test('requests without Origin are unchanged apart from Vary: Origin', async () => {
      const res = await server.request('/');
      assert.equal(res.status, 200);
      assertNoCors(res, 'no Origin');
      assert.equal(res.headers['vary'], 'Origin');
    });

    test('credentials = false: the origin without Allow-Credentials, on preflights and replies', async () => {
      await withConfig(server, [['cors', 'credentials', 'false']], async () => {
        const pre = await preflight('/_session', APP, 'POST', 'content-type');
        assert.equal(pre.status, 204);
        assert.equal(pre.headers['access-control-allow-origin'], APP);
        assert.equal(pre.headers['access-control-allow-credentials'], undefined);
        assertActualCors(await server.request('/', { headers: { Origin: APP } }), APP, false);
      });
    });

    test('origins = * with credentials = true: any origin is answered, credentials only for listed ones (never * with credentials)', async () => {
      await withConfig(server, [['cors', 'origins', `*, ${APP}`]], async () => {
        const pre = await preflight('/_session', EVIL, 'POST', 'content-type');
        assert.equal(pre.status, 204);
        assert.equal(pre.headers['access-control-allow-origin'], EVIL);
        assert.equal(pre.headers['access-control-allow-credentials'], undefined);
        assertActualCors(await server.request('/', { headers: { Origin: EVIL } }), EVIL, false);
        assertActualCors(await server.request('/', { headers: { Origin: APP } }), APP, true);
        const star = await server.request('/', { headers: { Origin: '*' } });
        assertActualCors(star, '*', false);
        assert.ok(server.logs.some((line) => line.includes('origins = * with credentials = true')), 'the combination is logged');
      });
    });

    test('exposed_headers is read live', async () => {
      await withConfig(server, [['cors', 'exposed_headers', 'ETag, X-Custom']], async () => {
        const res = await server.request('/', { headers: { Origin: APP } });
        assert.equal(res.headers['access-control-expose-headers'], 'content-type, cache-control, etag, x-custom');
      });
    });

    test('enable_cors = false turns everything off at once: no CORS headers, no Vary, preflights go to the handlers', async () => {
      await withConfig(server, [['chttpd', 'enable_cors', 'false']], async () => {
        const pre = await preflight('/_session', APP, 'POST', 'content-type');
        assert.equal(pre.status, 405);
        assertNoCors(pre, 'preflight with CORS off');
        assert.equal(pre.headers['vary'], undefined);
        const res = await server.request('/', { headers: { Origin: APP } });
        assertNoCors(res, 'request with CORS off');
        assert.equal(res.headers['vary'], undefined);
      });
      assert.equal((await preflight('/_session', APP, 'POST')).status, 204, 'back on');
    });

    test('origins are read live: a new origin is allowed at once, a removed one refused', async () => {
      const newcomer = 'http://new.example';
      assertNoCors(await preflight('/_session', newcomer, 'POST'), 'before');
      await withConfig(server, [['cors', 'origins', newcomer]], async () => {
        assert.equal((await preflight('/_session', newcomer, 'POST')).status, 204);
        assertNoCors(await preflight('/_session', APP, 'POST'), 'APP no longer listed');
      });
      assert.equal((await preflight('/_session', APP, 'POST')).status, 204);
    });
  });

  test('cross-site cookies: same_site = none with secure_cookie gives SameSite=None; Secure on a plain-HTTP login', async () => {
    await withConfig(server, [['chttpd_auth', 'same_site', 'none'], ['chttpd_auth', 'secure_cookie', 'true']], async () => {
      const login = await logIn(server, 'alice', ALICE_PW, { headers: { Origin: APP } });
      assert.equal(login.status, 200);
      assertActualCors(login, APP, true);
      const [setCookie] = setCookies(login);
      assert.match(setCookie ?? '', /^AuthSession=[^;]+;/);
      assert.match(setCookie ?? '', /; Secure(;|$)/);
      assert.match(setCookie ?? '', /; SameSite=None(;|$)/);
    });
  });

  test('the _config API sees [cors] and [chttpd] enable_cors', async () => {
    await putConfig(server, 'cors', 'max_age', '120');
    try {
      const res = await server.admin('/_node/_local/_config/cors');
      assert.equal(res.status, 200);
      assert.equal(res.body.max_age, '120');
      assert.equal(res.body.origins, `${APP}, ${OTHER}`);
      assert.equal((await server.admin('/_node/_local/_config/chttpd/enable_cors')).body, 'true');
      const pre = await preflight('/_session', APP, 'POST');
      assert.equal(pre.headers['access-control-max-age'], '120');
    } finally {
      await putConfig(server, 'cors', 'max_age', undefined);
    }
  });
});
