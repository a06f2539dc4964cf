// TLS: spec §1.4 (TLS strongly recommended for every method), R-METH-6 (DESIGN: `[ssl]` listener);
// reference §3.5 (`Secure` only when the connection itself is TLS).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { mintCookieValue } from '../../src/auth/cookie/codec.js';
import { startServer, type TestServer } from '../support/server.js';
import { collectResponse, type HttpResponse } from '../support/http.js';
import {
  FAILED_LOGIN,
  FAST_INI,
  assertAuthSessionCookie,
  assertClearingCookie,
  assertJsonText,
  authSessionHeader,
  authenticatedSession,
  basic,
  cookie,
  createUser,
  decodeToken,
  logIn,
  nowSeconds,
  serverSecret,
  sessionValue,
  withConfig,
} from '../support/session-helpers.js';

/** One request over HTTPS to a self-signed server (certificate checks off: the test made it). */
function tlsRequest(baseUrl: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<HttpResponse> {
  const url = new URL(baseUrl);
  const headers = { ...options.headers };
  if (options.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers, rejectUnauthorized: false, agent: false },
      (res) => collectResponse(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('TLS listener', () => {
  let server: TestServer;
  let certDir: string;
  let tlsUrl: string;
  let helenSalt: string;

  const tls = (path: string, options?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<HttpResponse> => tlsRequest(tlsUrl, path, options);
  const tlsLogin = (name: string, password: string, query = ''): Promise<HttpResponse> =>
    tls(`/_session${query}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name, password }) });

  before(async () => {
    certDir = mkdtempSync(join(tmpdir(), 'divan-tls-'));
    const key = join(certDir, 'key.pem');
    const cert = join(certDir, 'cert.pem');
    execFileSync('/usr/bin/openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    server = await startServer({ ini: `${FAST_INI}[ssl]\ncert_file = ${cert}\nkey_file = ${key}\n` });
    const { port } = await server.app.listenTls(0, '127.0.0.1');
    tlsUrl = `https://127.0.0.1:${port}`;
    helenSalt = await createUser(server, 'helen', 'helen-pw', ['h']);
  });
  after(async () => {
    await server.close();
    rmSync(certDir, { recursive: true, force: true });
  });

  test('R-METH-6: POST /_session over HTTPS logs in and the cookie carries Secure', async () => {
    const res = await tlsLogin('helen', 'helen-pw');
    assert.equal(res.status, 200);
    assertJsonText(res, { ok: true, name: 'helen', roles: ['h'] });
    const value = assertAuthSessionCookie(authSessionHeader(res), { maxAge: 600, secure: true });
    assert.equal(decodeToken(value).name, 'helen');
    const session = await tls('/_session', { headers: cookie(value) });
    assert.equal(session.status, 200);
    assertJsonText(session, authenticatedSession('helen', ['h'], 'cookie'));
  });

  test('R-METH-6: the plain-HTTP listener of the same server sends the cookie without Secure', async () => {
    const res = await logIn(server, 'helen', 'helen-pw');
    assert.equal(res.status, 200);
    assert.doesNotMatch(authSessionHeader(res), /Secure/);
    sessionValue(res, { maxAge: 600 });
  });

  test('R-METH-6 R-STATE-2: Basic over HTTPS authenticates and its cookie is Secure', async () => {
    const res = await tls('/_session', { headers: { Authorization: basic('helen', 'helen-pw') } });
    assert.equal(res.status, 200);
    assertJsonText(res, authenticatedSession('helen', ['h'], 'default'));
    assertAuthSessionCookie(authSessionHeader(res), { maxAge: 600, secure: true });
    const wrong = await tls('/_session', { headers: { Authorization: basic('helen', 'wrong') } });
    assert.equal(wrong.status, 401);
    assertJsonText(wrong, FAILED_LOGIN);
  });

  test('R-METH-6: the clearing cookies (failed login, logout) and a refreshed cookie are Secure over HTTPS', async () => {
    const failed = await tlsLogin('helen', 'wrong');
    assert.equal(failed.status, 401);
    assertJsonText(failed, FAILED_LOGIN);
    assertClearingCookie(failed, { maxAge: 600, secure: true });
    const logout = await tls('/_session', { method: 'DELETE' });
    assert.equal(logout.status, 200);
    assertJsonText(logout, { ok: true });
    assertClearingCookie(logout, { maxAge: 600, secure: true });
    const secret = await serverSecret(server);
    const old = mintCookieValue('helen', nowSeconds() - 120, secret, helenSalt, 'sha256');
    const refreshed = await tls('/_session', { headers: cookie(old) });
    assertJsonText(refreshed, authenticatedSession('helen', ['h'], 'cookie'));
    assertAuthSessionCookie(authSessionHeader(refreshed), { maxAge: 600, secure: true });
  });

  test('R-METH-6 R-COOKIE-4: with allow_persistent_cookies=false the HTTPS cookie is "AuthSession=<v>; Version=1; Secure; Path=/; HttpOnly"', async () => {
    await withConfig(server, [['chttpd_auth', 'allow_persistent_cookies', 'false']], async () => {
      const res = await tlsLogin('helen', 'helen-pw');
      assert.match(authSessionHeader(res), /^AuthSession=[A-Za-z0-9_-]+; Version=1; Secure; Path=\/; HttpOnly$/);
    });
  });

  test('R-POST-2 R-METH-6: ?next over HTTPS redirects to an https:// Location on the TLS port', async () => {
    const res = await tlsLogin('helen', 'helen-pw', '?next=/app');
    assert.equal(res.status, 302);
    assert.equal(res.headers['location'], `${tlsUrl}/app`);
    assertJsonText(res, { ok: true, name: null, roles: ['h'] });
    assertAuthSessionCookie(authSessionHeader(res), { maxAge: 600, secure: true });
  });
});
