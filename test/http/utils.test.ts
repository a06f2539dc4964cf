// `/_utils/`: the login page's and the admin console's static files (content types, caching, CSP,
// conditional requests, methods, path traversal) and the 401 → login page redirect of browsers.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { matchesIfNoneMatch } from '../../src/http/static.js';
import { CONSOLE_MODULES } from '../../src/http/routes/utils.js';
import { startServer, type TestServer } from '../support/server.js';
import { BROWSER_ACCEPT, FAST_INI, createUser, sessionCookie, withConfig } from '../support/session-helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const STATIC = `${ROOT}static/`;

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const FILES: ReadonlyArray<readonly [string, string, string]> = [
  ['session.html', 'text/html; charset=utf-8', 'no-cache, private'],
  ['theme.css', 'text/css; charset=utf-8', 'private, max-age=3600'],
  ['session.css', 'text/css; charset=utf-8', 'private, max-age=3600'],
  ['session.js', 'text/javascript; charset=utf-8', 'private, max-age=3600'],
  ['divan.svg', 'image/svg+xml', 'private, max-age=3600'],
  ['index.html', 'text/html; charset=utf-8', 'no-cache, private'],
  ['console.css', 'text/css; charset=utf-8', 'private, max-age=3600'],
  ...CONSOLE_MODULES.map((name) => [name, 'text/javascript; charset=utf-8', 'private, max-age=3600'] as const),
];

const NOT_AUTHORIZED_DB = 'You are not authorized to access this db.';
const NOT_FOUND = { error: 'not_found', reason: 'missing' };

/** Sends raw request bytes and returns the raw response bytes (keep-alive framing included). */
function rawExchange(url: string, requestText: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.write(requestText);
  });
}

describe('/_utils: the login page, the admin console and their assets', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ ini: FAST_INI });
    await createUser(server, 'amy', 'amy-pw', ['reader']);
    assert.equal((await server.admin('/private', { method: 'PUT' })).status, 201);
    const security = await server.admin('/private/_security', { method: 'PUT', body: { members: { names: ['amy'], roles: [] }, admins: { names: [], roles: [] } } });
    assert.equal(security.status, 200, security.text);
  });
  after(async () => server.close());

  test('each file is served byte for byte with its content type and caching policy', async () => {
    for (const [name, type, cacheControl] of FILES) {
      const res = await server.request(`/_utils/${name}`);
      assert.equal(res.status, 200, name);
      assert.equal(res.headers['content-type'], type, name);
      assert.equal(res.headers['cache-control'], cacheControl, name);
      assert.equal(res.text, readFileSync(`${STATIC}${name}`, 'utf8'), name);
      assert.equal(res.headers['content-length'], String(readFileSync(`${STATIC}${name}`).length), name);
    }
  });

  test('anyone may GET the page, a logged-in non-admin too (GET|HEAD /_utils* needs no authorization)', async () => {
    const anonymous = await server.request('/_utils/session.html');
    assert.equal(anonymous.status, 200);
    const cookie = await sessionCookie(server, 'amy', 'amy-pw');
    const member = await server.request('/_utils/session.js', { headers: { Cookie: `AuthSession=${cookie}` } });
    assert.equal(member.status, 200);
    assert.equal(member.headers['content-type'], 'text/javascript; charset=utf-8');
  });

  test('the page and every asset carry the strict CSP, nosniff, no-referrer and DENY framing', async () => {
    for (const [name] of FILES) {
      const res = await server.request(`/_utils/${name}`);
      assert.equal(res.headers['content-security-policy'], CSP, name);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', name);
      assert.equal(res.headers['referrer-policy'], 'no-referrer', name);
      assert.equal(res.headers['x-frame-options'], 'DENY', name);
    }
  });

  for (const page of ['session.html', 'index.html']) {
  test(`${page} has no inline script or style, and loads only its own /_utils files`, async () => {
    const html = (await server.request(`/_utils/${page}`)).text;
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    assert.ok(scripts.length >= 1, 'a script element');
    for (const [, attributes, body] of scripts) {
      assert.match(attributes!, /\bsrc="\/_utils\/[a-z./]+"/, 'external script only');
      assert.equal(body!.trim(), '', 'no inline script body');
    }
    assert.doesNotMatch(html, /<style\b/i, 'no <style> element');
    assert.doesNotMatch(html, /\sstyle\s*=/i, 'no style attribute');
    assert.doesNotMatch(html, /\son[a-z]+\s*=/i, 'no inline event handler');
    assert.doesNotMatch(html, /javascript:/i, 'no javascript: URL');
    const references = [...html.matchAll(/\b(?:src|href)="([^"#]+)"/g)].map((match) => match[1]!);
    assert.ok(references.length >= 3, `references: ${references.join(' ')}`);
    for (const reference of references) {
      assert.match(reference, /^\/_utils\/[a-z./]+$/, `same-origin /_utils reference: ${reference}`);
      const res = await server.request(reference);
      assert.equal(res.status, 200, reference);
    }
    if (page === 'session.html') {
      assert.match(html, /<form id="login-form" method="post" action="\/_session">/, 'without JavaScript the form still posts to /_session');
      for (const id of ['name', 'password', 'token', 'new-password', 'confirm-password']) {
        assert.match(html, new RegExp(`<label for="${id}">`), `a label for #${id}`);
      }
    }
    assert.match(html, /id="error"[^>]*role="alert"[^>]*aria-live="assertive"/, 'errors go to a live region');
    assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  });
  }

  test('ETag: a strong validator, stable per file, different between files', async () => {
    const etags = new Set<string>();
    for (const [name] of FILES) {
      const first = await server.request(`/_utils/${name}`);
      const second = await server.request(`/_utils/${name}`);
      assert.match(first.headers['etag'] ?? '', /^"[A-Za-z0-9_-]{16,}"$/, name);
      assert.equal(second.headers['etag'], first.headers['etag'], name);
      etags.add(first.headers['etag']!);
    }
    assert.equal(etags.size, FILES.length);
  });

  test('If-None-Match: the current ETag (also weak, in a list or *) gives 304 without a body; another gives 200', async () => {
    for (const [name, type, cacheControl] of FILES) {
      const { headers } = await server.request(`/_utils/${name}`);
      const etag = headers['etag']!;
      for (const condition of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const res = await server.request(`/_utils/${name}`, { headers: { 'If-None-Match': condition } });
        assert.equal(res.status, 304, `${name} ${condition}`);
        assert.equal(res.text, '', `${name} ${condition}`);
        assert.equal(res.headers['etag'], etag);
        assert.equal(res.headers['cache-control'], cacheControl);
        assert.equal(res.headers['content-type'], type);
      }
      const stale = await server.request(`/_utils/${name}`, { headers: { 'If-None-Match': '"stale"' } });
      assert.equal(stale.status, 200, name);
      assert.equal(stale.text, readFileSync(`${STATIC}${name}`, 'utf8'));
    }
  });

  test('a 304 sends no body bytes: the next response on the same connection is intact', async () => {
    const { headers } = await server.request('/_utils/session.css');
    const raw = await rawExchange(
      server.url,
      `GET /_utils/session.css HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${headers['etag']}\r\n\r\nGET /_up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    const [notModified, rest] = raw.split(/\r\n\r\n/, 2);
    assert.match(notModified!, /^HTTP\/1\.1 304 /);
    // Content-Length, if sent on a 304, must be the 200's (RFC 9110 §8.6).
    const length = /\r\nContent-Length: (\d+)/i.exec(notModified!);
    if (length) assert.equal(Number(length[1]), readFileSync(`${STATIC}session.css`).length);
    assert.match(rest!, /^HTTP\/1\.1 200 /, 'the second response follows the 304 head directly');
  });

  test('matchesIfNoneMatch: comparison rules', () => {
    assert.equal(matchesIfNoneMatch(undefined, '"a"'), false);
    assert.equal(matchesIfNoneMatch('"a"', '"a"'), true);
    assert.equal(matchesIfNoneMatch('W/"a"', '"a"'), true);
    assert.equal(matchesIfNoneMatch(' "b" ,"a"', '"a"'), true);
    assert.equal(matchesIfNoneMatch('*', '"a"'), true);
    assert.equal(matchesIfNoneMatch('"ab"', '"a"'), false);
    assert.equal(matchesIfNoneMatch('a', '"a"'), false);
    assert.equal(matchesIfNoneMatch('', '"a"'), false);
  });

  test('HEAD: the GET headers (Content-Length of the file) and no body', async () => {
    for (const [name, type] of FILES) {
      const get = await server.request(`/_utils/${name}`);
      const head = await server.request(`/_utils/${name}`, { method: 'HEAD' });
      assert.equal(head.status, 200, name);
      assert.equal(head.text, '', name);
      assert.equal(head.headers['content-type'], type);
      assert.equal(head.headers['content-length'], get.headers['content-length']);
      assert.equal(head.headers['etag'], get.headers['etag']);
      assert.equal(head.headers['content-security-policy'], CSP);
    }
  });

  test('other methods: 405 with Allow: GET,HEAD for a server admin; 401 for others, as CouchDB (§9.3)', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      for (const path of ['/_utils/session.html', '/_utils/', '/_utils/nothing-here']) {
        // No body: node:http frames none for a DELETE without Content-Length.
        const admin = await server.admin(path, { method });
        assert.equal(admin.status, 405, `${method} ${path}`);
        assert.equal(admin.headers['allow'], 'GET,HEAD');
        assert.deepEqual(admin.body, { error: 'method_not_allowed', reason: 'Only GET,HEAD allowed' });
        const anonymous = await server.request(path, { method });
        assert.equal(anonymous.status, 401, `${method} ${path}`);
        assert.deepEqual(anonymous.body, { error: 'unauthorized', reason: 'You are not a server admin.' });
      }
    }
  });

  test('only the allow-listed names exist: traversal, encoded slashes, NUL and other spellings are 404', async () => {
    // Each of these would reach a real file (package.json, the TypeScript source, the static dir)
    // through a naive path join or a decode-then-join.
    const attempts = [
      '/_utils/../package.json',
      '/_utils/../../package.json',
      '/_utils/..%2fpackage.json',
      '/_utils/..%2Fpackage.json',
      '/_utils/%2e%2e/package.json',
      '/_utils/%2e%2e%2fpackage.json',
      '/_utils/..%5cpackage.json',
      '/_utils/..\\package.json',
      '/_utils/session.html%00',
      '/_utils/session.html%00.css',
      '/_utils/%00',
      '/_utils//session.html',
      '/_utils/./session.html',
      '/_utils/session.html/',
      '/_utils/session.html/..',
      '/_utils/%73ession.html',
      '/_utils/SESSION.HTML',
      '/_utils/static/session.html',
      '/_utils/session.ts',
      '/_utils/console/',
      '/_utils/console/app.ts',
      '/_utils/console//app.js',
      '/_utils/console%2Fapp.js',
      '/_utils/console/../session.js',
      '/_utils/index.htm',
      '/_utils/__proto__',
      '/_utils/constructor',
      '/%5Futils/session.html',
    ];
    for (const path of attempts) {
      const res = await server.request(path);
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.body, NOT_FOUND, path);
      assert.doesNotMatch(res.text, /"name":\s*"divan"|<html|import/, path);
    }
  });

  test('issue 34 item 5: /_utils redirects permanently (301, as CouchDB) to /_utils/, the console; a login hand-off there (return, reason) goes on to the login page', async () => {
    const bare = await server.request('/_utils');
    assert.equal(bare.status, 301);
    assert.equal(bare.headers['location'], `${server.url}/_utils/`);
    assert.equal((await server.request('/_utils?x=1')).headers['location'], `${server.url}/_utils/?x=1`);
    assert.equal((await server.request('/_utils', { method: 'HEAD' })).status, 301);
    for (const path of ['/_utils/', '/_utils/index.html']) {
      const res = await server.request(path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.headers['content-security-policy'], CSP);
      assert.equal(res.text, readFileSync(`${STATIC}index.html`, 'utf8'));
    }
    const withQuery = await server.request('/_utils/?return=%2Fprivate&reason=Why%20not');
    assert.equal(withQuery.status, 302);
    const location = new URL(withQuery.headers['location']!);
    assert.equal(location.pathname, '/_utils/session.html');
    assert.equal(location.searchParams.get('return'), '/private');
    assert.equal(location.searchParams.get('reason'), 'Why not');
  });

  test('a browser (Accept ranks text/html first) asking for a protected database is sent to the page with return and reason', async () => {
    const res = await server.request('/private', { headers: { Accept: BROWSER_ACCEPT } });
    assert.equal(res.status, 302);
    assert.equal(res.headers['location'], `${server.url}/_utils/session.html?return=%2Fprivate&reason=You%20are%20not%20authorized%20to%20access%20this%20db.`);
    const location = new URL(res.headers['location']!);
    assert.equal(location.searchParams.get('return'), '/private');
    assert.equal(location.searchParams.get('reason'), NOT_AUTHORIZED_DB);
    const page = await server.request(`${location.pathname}${location.search}`, { headers: { Accept: BROWSER_ACCEPT } });
    assert.equal(page.status, 200, 'the redirect target is the login page itself');
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');

    const withQuery = await server.request('/private/_all_docs?include_docs=true', { headers: { Accept: 'text/html' } });
    assert.equal(withQuery.status, 302);
    assert.equal(new URL(withQuery.headers['location']!).searchParams.get('return'), '/private/_all_docs?include_docs=true');
  });

  test('JSON clients (JSON Accept, */*, none) get the 401 itself, not the redirect', async () => {
    for (const accept of ['application/json', '*/*', 'application/json, text/html;q=0.5', undefined]) {
      const res = await server.request('/private', { headers: accept === undefined ? {} : { Accept: accept } });
      assert.equal(res.status, 401, String(accept));
      assert.equal(res.headers['location'], undefined);
      assert.deepEqual(res.body, { error: 'unauthorized', reason: NOT_AUTHORIZED_DB });
    }
  });

  test('[chttpd_auth] authentication_redirect still chooses the target', async () => {
    await withConfig(server, [['chttpd_auth', 'authentication_redirect', '/_utils/session.html?theme=x']], async () => {
      const res = await server.request('/private', { headers: { Accept: BROWSER_ACCEPT } });
      assert.equal(res.headers['location'], `${server.url}/_utils/session.html?theme=x&return=%2Fprivate&reason=You%20are%20not%20authorized%20to%20access%20this%20db.`);
    });
  });
});
