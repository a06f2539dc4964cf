// CORS in a real browser: a web app served on one loopback port logs in to Divan on another port
// with fetch(..., { credentials: 'include' }) and reads a members-only document with the cookie;
// the same page from an origin that is not allowed is stopped by the browser.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { startServer, type TestServer } from '../support/server.js';
import { FAST_INI, createUser, withConfig } from '../support/session-helpers.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ALICE_PW = 'alice-browser-pw';

/** The web app: one function that logs in and reads a document, reporting what the page could see. */
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>CORS test app</title>
<script>
async function attempt(couch, name, password, docPath) {
  const result = {};
  if (name !== null) {
    try {
      const login = await fetch(couch + '/_session', {
        method: 'POST',
        credentials: 'include',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name, password }),
      });
      result.login = { status: login.status, body: await login.json(), requestId: login.headers.get('X-Couch-Request-ID') };
    } catch (error) {
      result.login = { error: error.name };
    }
  }
  try {
    const doc = await fetch(couch + docPath, { credentials: 'include' });
    result.doc = { status: doc.status, body: await doc.json(), etag: doc.headers.get('ETag') };
  } catch (error) {
    result.doc = { error: error.name };
  }
  return result;
}
</script>
`;

interface Outcome {
  login?: { status?: number; body?: any; requestId?: string | null; error?: string };
  doc?: { status?: number; body?: any; etag?: string | null; error?: string };
}

/** A tiny static server for the app page, on a loopback port of its own. */
async function servePage(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (req.url === '/' || req.url === '/index.html') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(PAGE);
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('CORS in headless Chromium', { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}` }, () => {
  let divan: TestServer;
  let browser: Browser;
  let allowedPage: { server: Server; port: number };
  let refusedPage: { server: Server; port: number };
  let allowedOrigin: string;

  /** Opens the app from `pageUrl` in `context` and runs `attempt` against Divan. */
  async function run(context: BrowserContext, pageUrl: string, name: string | null, password: string | null, docPath: string, couch = divan.url): Promise<Outcome> {
    const page = await context.newPage();
    try {
      await page.goto(pageUrl);
      return (await page.evaluate(`attempt(${JSON.stringify(couch)}, ${JSON.stringify(name)}, ${JSON.stringify(password)}, ${JSON.stringify(docPath)})`)) as Outcome;
    } finally {
      await page.close();
    }
  }

  before(async () => {
    allowedPage = await servePage();
    refusedPage = await servePage();
    allowedOrigin = `http://127.0.0.1:${allowedPage.port}`;
    divan = await startServer({ ini: `${FAST_INI}[chttpd]\nenable_cors = true\n[cors]\norigins = ${allowedOrigin}\ncredentials = true\n` });
    await createUser(divan, 'alice', ALICE_PW);
    assert.equal((await divan.admin('/members', { method: 'PUT' })).status, 201);
    const security = await divan.admin('/members/_security', { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: ['alice'], roles: [] } } });
    assert.equal(security.status, 200, security.text);
    assert.equal((await divan.admin('/members/secret', { method: 'PUT', body: { text: 'members only' } })).status, 201);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await divan?.close();
    for (const page of [allowedPage, refusedPage]) await new Promise((resolve) => page?.server.close(resolve));
  });

  test('the allowed origin logs in with credentials: include and reads the members-only document with the cookie', async () => {
    const context = await browser.newContext();
    try {
      const before = await run(context, `${allowedOrigin}/`, null, null, '/members/secret');
      assert.equal(before.doc?.status, 401, `without a session the document is refused: ${JSON.stringify(before)}`);

      const outcome = await run(context, `${allowedOrigin}/`, 'alice', ALICE_PW, '/members/secret');
      assert.equal(outcome.login?.status, 200, JSON.stringify(outcome));
      assert.deepEqual(outcome.login?.body, { ok: true, name: 'alice', roles: [] });
      assert.match(outcome.login?.requestId ?? '', /^[0-9a-f]{12}$/, 'X-Couch-Request-ID is exposed to the page');
      assert.equal(outcome.doc?.status, 200, JSON.stringify(outcome));
      assert.equal(outcome.doc?.body.text, 'members only');
      assert.match(outcome.doc?.etag ?? '', /^"1-[0-9a-f]{32}"$/, 'ETag is exposed to the page');

      const cookies = await context.cookies(divan.url);
      assert.deepEqual(cookies.map((cookie) => cookie.name), ['AuthSession'], 'the browser keeps the cookie for Divan');
    } finally {
      await context.close();
    }
  });

  test('the same page from an origin that is not allowed cannot log in, nor read the document even with the session cookie', async () => {
    const context = await browser.newContext();
    try {
      const refused = await run(context, `http://127.0.0.1:${refusedPage.port}/`, 'alice', ALICE_PW, '/members/secret');
      assert.deepEqual(refused, { login: { error: 'TypeError' }, doc: { error: 'TypeError' } });
      assert.deepEqual(await context.cookies(divan.url), [], 'the refused preflight kept the login from being sent');

      // The allowed app signs in; the cookie is per host, so the refused page's request carries it
      // too: Divan answers, but without CORS headers the browser keeps the answer from the page.
      const allowed = await run(context, `${allowedOrigin}/`, 'alice', ALICE_PW, '/members/secret');
      assert.equal(allowed.doc?.status, 200, JSON.stringify(allowed));
      const withCookie = await run(context, `http://127.0.0.1:${refusedPage.port}/`, null, null, '/members/secret');
      assert.deepEqual(withCookie, { doc: { error: 'TypeError' } });
    } finally {
      await context.close();
    }
  });

  test('cross-site (page on localhost, Divan on 127.0.0.1): the cookie needs same_site = none and secure_cookie = true', async () => {
    const crossSiteOrigin = `http://localhost:${allowedPage.port}`;
    // A profile that allows third-party cookies, so only SameSite and Secure decide.
    const profile = mkdtempSync(join(tmpdir(), 'divan-chromium-'));
    mkdirSync(join(profile, 'Default'));
    writeFileSync(join(profile, 'Default', 'Preferences'), JSON.stringify({ profile: { cookie_controls_mode: 0, block_third_party_cookies: false } }));
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const crossSite = async (): Promise<Outcome> => {
      await context.clearCookies();
      return run(context, `${crossSiteOrigin}/`, 'alice', ALICE_PW, '/members/secret');
    };
    try {
      await withConfig(divan, [['cors', 'origins', crossSiteOrigin]], async () => {
        // Without SameSite the browser treats the cookie as Lax and drops it from a cross-site
        // response: the login succeeds, the next request is anonymous.
        const lax = await crossSite();
        assert.equal(lax.login?.status, 200, JSON.stringify(lax));
        assert.equal(lax.doc?.status, 401, `a cookie without SameSite is not kept cross-site: ${JSON.stringify(lax)}`);
        await withConfig(divan, [['chttpd_auth', 'same_site', 'none']], async () => {
          const insecure = await crossSite();
          assert.equal(insecure.login?.status, 200, JSON.stringify(insecure));
          assert.equal(insecure.doc?.status, 401, `SameSite=None without Secure is refused: ${JSON.stringify(insecure)}`);
          await withConfig(divan, [['chttpd_auth', 'secure_cookie', 'true']], async () => {
            const none = await crossSite();
            assert.equal(none.login?.status, 200, JSON.stringify(none));
            assert.equal(none.doc?.status, 200, `SameSite=None; Secure is sent cross-site: ${JSON.stringify(none)}`);
            assert.equal(none.doc?.body.text, 'members only');
            // A browser that blocks third-party cookies (here Chromium's default for a fresh
            // incognito-like context) refuses even that: cross-site cookie login is fragile.
            const blocking = await browser.newContext();
            try {
              const blocked = await run(blocking, `${crossSiteOrigin}/`, 'alice', ALICE_PW, '/members/secret');
              assert.equal(blocked.login?.status, 200, JSON.stringify(blocked));
              assert.equal(blocked.doc?.status, 401, `third-party cookie blocking wins: ${JSON.stringify(blocked)}`);
            } finally {
              await blocking.close();
            }
          });
        });
      });
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});
