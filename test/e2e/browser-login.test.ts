// The browser login page end to end, in headless Chromium (Debian's chromium + playwright-core):
// the 401 redirect of a protected database, login and return, errors in words (wrong password,
// lockout, one-time code), the session facts, a password change, logout, keyboard-only use and a
// phone's width. Each state is saved as test-output/browser/<state>.png (see docs/browser.md).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startServer, type TestServer } from '../support/server.js';
import {
  DESKTOP,
  PHONE,
  assertNoHorizontalScroll,
  chromiumSkipReason,
  focusOutline,
  focusedId,
  launchChromium,
  screenshot,
  textOf,
  waitForText,
  watchContext,
  type ContextWatch,
} from '../support/browser.js';

const INI = '[chttpd_auth]\niterations = 1000\n[chttpd_auth_lockout]\nmode = enforce\nthreshold = 5\n';
const NOT_AUTHORIZED_DB = 'You are not authorized to access this db.';
const LOGIN_PAGE = '/_utils/session.html';

// RFC 6238's SHA-1 seed "12345678901234567890" in base32, and an independent code generator.
const TOTP_KEY = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const TOTP_SEED = Buffer.from('12345678901234567890', 'ascii');
function totp(): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30000)));
  const mac = createHmac('sha1', TOTP_SEED).update(message).digest();
  const value = mac.readUInt32BE(mac[mac.length - 1]! & 0xf) & 0x7fffffff;
  return String(value % 1_000_000).padStart(6, '0');
}

const skip = chromiumSkipReason();

describe('browser login page (headless Chromium)', { skip }, () => {
  let server: TestServer;
  let browser: Browser;

  async function createUser(name: string, password: string, roles: string[] = [], extra: Record<string, unknown> = {}): Promise<void> {
    const res = await server.admin(`/_users/org.couchdb.user:${name}`, {
      method: 'PUT',
      body: { _id: `org.couchdb.user:${name}`, name, type: 'user', roles, password, ...extra },
    });
    assert.equal(res.status, 201, res.text);
  }

  async function newContext(options = DESKTOP): Promise<{ context: BrowserContext; page: Page; watch: ContextWatch }> {
    const context = await browser.newContext(options);
    const watch = await watchContext(context);
    return { context, page: await context.newPage(), watch };
  }

  /** The login page after its first look at /_session. */
  async function openLoginPage(page: Page, query = ''): Promise<void> {
    await page.goto(`${server.url}${LOGIN_PAGE}${query}`);
    await page.waitForLoadState('networkidle');
  }

  async function authSession(context: BrowserContext): Promise<{ value: string; httpOnly: boolean } | undefined> {
    return (await context.cookies(server.url)).find((cookie) => cookie.name === 'AuthSession');
  }

  /** Fills the login form and clicks the button; resolves with the POST /_session body sent. */
  async function submitLogin(page: Page, name: string, password: string, token = ''): Promise<Record<string, unknown>> {
    await page.fill('#name', name);
    await page.fill('#password', password);
    await page.fill('#token', token);
    const [request] = await Promise.all([
      page.waitForRequest((req) => req.method() === 'POST' && new URL(req.url()).pathname === '/_session'),
      page.click('#login-button'),
    ]);
    return JSON.parse(request.postData() ?? 'null') as Record<string, unknown>;
  }

  before(async () => {
    server = await startServer({ ini: INI });
    await createUser('alice', 'alice-old-pw', ['reader', 'writer']);
    for (const name of ['locky', 'kim', 'rita', 'pat']) await createUser(name, `${name}-pw`);
    await createUser('tina', 'tina-pw', ['two-factor'], { totp: { key: TOTP_KEY } });
    assert.equal((await server.admin('/private', { method: 'PUT' })).status, 201);
    const security = await server.admin('/private/_security', {
      method: 'PUT',
      body: { members: { names: ['alice', 'kim', 'pat'], roles: [] }, admins: { names: [], roles: [] } },
    });
    assert.equal(security.status, 200, security.text);
    assert.equal((await server.admin('/private/welcome', { method: 'PUT', body: { message: 'Hello, members' } })).status, 201);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  describe('the whole story in one browser: redirect, errors, login, session, new password, logout', () => {
    let context: BrowserContext;
    let page: Page;
    let watch: ContextWatch;

    before(async () => {
      ({ context, page, watch } = await newContext());
    });
    after(async () => context?.close());

    test('an anonymous request for a protected database lands on the login page, which says why', async () => {
      await page.goto(`${server.url}/private`);
      await page.waitForLoadState('networkidle');
      assert.equal(page.url(), `${server.url}${LOGIN_PAGE}?return=%2Fprivate&reason=You%20are%20not%20authorized%20to%20access%20this%20db.`);
      assert.equal(await page.title(), 'Log in · Divan');
      assert.equal(await textOf(page, 'h1'), 'Log in');
      assert.equal(await textOf(page, '#reason-text'), NOT_AUTHORIZED_DB);
      assert.equal(await textOf(page, '#return-path'), '/private');
      assert.ok(await page.isVisible('#login-form'));
      assert.ok(await page.isHidden('#session-section'));
      assert.ok(await page.isVisible('label[for="token"]'), 'the optional one-time code field is offered');
      await screenshot(page, '01-redirected-to-login');
      watch.assertClean(server.url);
    });

    test('a wrong password shows the error in words, in the live region, and keeps the page', async () => {
      const sent = await submitLogin(page, 'alice', 'not-her-password', '123456');
      assert.deepEqual(sent, { name: 'alice', password: 'not-her-password', token: '123456' }, 'a filled one-time code is sent as token');
      const error = await waitForText(page, '#error');
      assert.match(error, /^Wrong user name or password \(or one-time code, if your account uses one\)\. Please try again\.$/);
      assert.equal(await page.getAttribute('#error', 'role'), 'alert');
      assert.equal(await page.getAttribute('#error', 'aria-live'), 'assertive');
      assert.equal(await page.inputValue('#password'), '', 'the wrong password is cleared');
      assert.equal(await focusedId(page), 'password', 'focus goes back to the password');
      assert.equal(await page.getAttribute('#password', 'aria-invalid'), 'true');
      assert.ok(new URL(page.url()).pathname === LOGIN_PAGE);
      assert.equal((await authSession(context))?.value ?? '', '', 'no session cookie');
      await screenshot(page, '02-wrong-password');
      watch.assertClean(server.url);
    });

    test('logging in returns to the protected database', async () => {
      const [sent] = await Promise.all([submitLogin(page, 'alice', 'alice-old-pw'), page.waitForURL(`${server.url}/private`)]);
      assert.deepEqual(sent, { name: 'alice', password: 'alice-old-pw' }, 'no token when the field is empty');
      const body = await textOf(page, 'body');
      assert.match(body, /"db_name":"private"/);
      const cookie = await authSession(context);
      assert.ok(cookie && cookie.value !== '', 'an AuthSession cookie');
      assert.equal(cookie.httpOnly, true);
      await page.goto(`${server.url}/private/welcome`);
      assert.match(await textOf(page, 'body'), /"message":"Hello, members"/);
      await page.goto(`${server.url}/private`);
      await screenshot(page, '03-back-at-the-database');
      watch.assertClean(server.url);
    });

    test('the page shows the user, roles, how they were authenticated and when the cookie ends', async () => {
      const started = Date.now();
      await openLoginPage(page);
      await page.waitForSelector('#session-section', { state: 'visible' });
      assert.equal(await textOf(page, 'h1'), 'You are logged in');
      assert.equal(await textOf(page, '#user-name'), 'alice');
      assert.deepEqual(await page.$$eval('#user-roles .role', (spans) => spans.map((span) => span.textContent)), ['reader', 'writer']);
      assert.equal(await textOf(page, '#user-auth'), 'Session cookie (cookie)');
      assert.equal(await textOf(page, '#user-auth code'), 'cookie', 'info.authenticated as the server says it');
      const expiry = await textOf(page, '#user-expiry');
      assert.match(expiry, /^Ends about \d{2}:\d{2} \(10 minutes after your last request; each request renews it\)\./);
      assert.match(expiry, /600 s: the default \[chttpd_auth\] timeout; only server admins can read the actual setting\.$/);
      const ends = Date.parse((await page.getAttribute('#user-expiry time', 'datetime')) ?? '');
      assert.ok(ends >= started + 600_000 - 1000 && ends <= Date.now() + 600_000 + 1000, `cookie end ${new Date(ends).toISOString()}`);
      assert.ok(await page.isHidden('#login-section'), 'no login form while logged in (no reason given)');
      assert.ok(await page.isHidden('#reason'));
      await screenshot(page, '04-session', { fullPage: true });
      watch.assertClean(server.url);
    });

    test('changing the password through the _users document works; the old one then fails', async () => {
      await page.fill('#new-password', 'alice-new-pw');
      await page.fill('#confirm-password', 'alice-typo-pw');
      await page.click('#password-button');
      assert.equal(await waitForText(page, '#error'), 'The two new passwords differ. Please type the same password twice.');
      assert.equal(await focusedId(page), 'confirm-password');

      await page.fill('#confirm-password', 'alice-new-pw');
      const [put] = await Promise.all([
        page.waitForRequest((req) => req.method() === 'PUT' && req.url() === `${server.url}/_users/org.couchdb.user%3Aalice`),
        page.click('#password-button'),
      ]);
      const doc = JSON.parse(put.postData() ?? '{}') as Record<string, unknown>;
      assert.equal(doc['password'], 'alice-new-pw');
      assert.match(String(doc['_rev']), /^1-/, 'the PUT carries the read revision');
      assert.equal(await waitForText(page, '#status'), 'Your password is changed. You are still logged in, now with the new password.');
      assert.equal(await page.getAttribute('#status', 'role'), 'status');
      assert.ok(await page.isVisible('#session-section'));
      assert.equal(await textOf(page, '#user-name'), 'alice');
      assert.equal(await page.inputValue('#new-password'), '');

      const old = await server.request('/_session', { method: 'POST', body: { name: 'alice', password: 'alice-old-pw' } });
      assert.equal(old.status, 401, 'the old password fails');
      const fresh = await server.request('/_session', { method: 'POST', body: { name: 'alice', password: 'alice-new-pw' } });
      assert.equal(fresh.status, 200, 'the new password works');
      const whoAmI = await page.evaluate(`fetch('/_session', { headers: { Accept: 'application/json' } }).then((res) => res.json())`);
      assert.equal((whoAmI as { userCtx: { name: string } }).userCtx.name, 'alice', 'the browser holds a cookie of the new password');
      await screenshot(page, '05-password-changed');
      watch.assertClean(server.url);
    });

    test('logout clears the session', async () => {
      await page.click('#logout-button');
      assert.equal(await waitForText(page, '#status'), 'You are logged out.');
      assert.ok(await page.isVisible('#login-form'));
      assert.ok(await page.isHidden('#session-section'));
      assert.equal(await page.inputValue('#name'), 'alice');
      assert.equal(await focusedId(page), 'name');
      assert.equal((await authSession(context))?.value ?? '', '', 'the AuthSession cookie is cleared');
      await screenshot(page, '06-logged-out');
      const whoAmI = await page.evaluate(`fetch('/_session', { headers: { Accept: 'application/json' } }).then((res) => res.json())`);
      assert.equal((whoAmI as { userCtx: { name: unknown } }).userCtx.name, null);
      await page.goto(`${server.url}/private`);
      assert.equal(new URL(page.url()).pathname, LOGIN_PAGE, 'the database sends the browser to the login page again');
      watch.assertClean(server.url);
    });

    test('in the browser too, the old password fails and the new one works', async () => {
      await page.waitForLoadState('networkidle');
      await submitLogin(page, 'alice', 'alice-old-pw');
      assert.match(await waitForText(page, '#error'), /^Wrong user name or password/);
      await screenshot(page, '07-old-password-refused');
      await Promise.all([submitLogin(page, 'alice', 'alice-new-pw'), page.waitForURL(`${server.url}/private`)]);
      assert.match(await textOf(page, 'body'), /"db_name":"private"/);
      watch.assertClean(server.url);
    });
  });

  test('a locked account is told so in words (5 failures, then even the right password → 403)', async () => {
    for (let attempt = 1; attempt <= 5; attempt++) {
      const res = await server.request('/_session', { method: 'POST', body: { name: 'locky', password: 'wrong' } });
      assert.equal(res.status, 401, `attempt ${attempt}`);
    }
    const { context, page, watch } = await newContext();
    try {
      await openLoginPage(page);
      await submitLogin(page, 'locky', 'locky-pw');
      const error = await waitForText(page, '#error');
      assert.equal(error, 'Too many failed attempts: logins to this account from your address are locked for a few minutes. Please wait, then try again.');
      assert.ok(await page.isHidden('#session-section'));
      await screenshot(page, '08-locked-out');
      watch.assertClean(server.url);
    } finally {
      await context.close();
    }
  });

  test('an account with two-factor login needs the one-time code: refused without it, logged in with it', async () => {
    const { context, page, watch } = await newContext();
    try {
      await openLoginPage(page);
      const withoutCode = await submitLogin(page, 'tina', 'tina-pw');
      assert.equal(withoutCode['token'], undefined);
      assert.match(await waitForText(page, '#error'), /or one-time code, if your account uses one/);
      await page.fill('#password', 'tina-pw');
      await page.focus('#token');
      await screenshot(page, '09-one-time-code');
      await page.fill('#token', '12ab');
      await page.click('#login-button');
      assert.equal(await waitForText(page, '#error'), 'The one-time code is 6 to 8 digits; leave it empty if your account does not use one.');
      assert.equal(await focusedId(page), 'token');
      const sent = await submitLogin(page, 'tina', 'tina-pw', totp());
      assert.match(String(sent['token']), /^\d{6}$/);
      await page.waitForSelector('#session-section', { state: 'visible' });
      assert.equal(await waitForText(page, '#status'), 'Logged in as tina.');
      assert.equal(await textOf(page, '#user-name'), 'tina');
      assert.equal(await focusedId(page), 'session-heading', 'focus moves to the session');
      watch.assertClean(server.url);
    } finally {
      await context.close();
    }
  });

  test('a server admin sees the configured cookie timeout, and is told how an [admins] password changes', async () => {
    const put = await server.admin('/_node/_local/_config/chttpd_auth/timeout', { method: 'PUT', body: JSON.stringify('900') });
    assert.equal(put.status, 200, put.text);
    const { context, page, watch } = await newContext();
    try {
      await openLoginPage(page);
      const started = Date.now();
      await submitLogin(page, 'root', 'r00t-pass');
      await page.waitForSelector('#session-section', { state: 'visible' });
      await page.locator('#user-expiry').filter({ hasText: '900 s' }).waitFor();
      const expiry = await textOf(page, '#user-expiry');
      assert.match(expiry, /^Ends about \d{2}:\d{2} \(15 minutes after your last request; each request renews it\)\./);
      assert.match(expiry, /900 s: the server's \[chttpd_auth\] timeout\.$/);
      const ends = Date.parse((await page.getAttribute('#user-expiry time', 'datetime')) ?? '');
      assert.ok(ends >= started + 900_000 - 1000 && ends <= Date.now() + 900_000 + 1000, `cookie end ${new Date(ends).toISOString()}`);
      assert.deepEqual(await page.$$eval('#user-roles .role', (spans) => spans.map((span) => span.textContent)), ['_admin']);
      await page.fill('#new-password', 'another-pass');
      await page.fill('#confirm-password', 'another-pass');
      await page.click('#password-button');
      assert.equal(
        await waitForText(page, '#error'),
        'root is a server admin of the configuration file ([admins]), with no user document to change. A server admin changes that password with PUT /_node/_local/_config/admins/root.',
      );
      assert.equal((await server.request('/_session', { method: 'POST', body: { name: 'root', password: 'r00t-pass' } })).status, 200, 'nothing changed');
      watch.assertClean(server.url);
    } finally {
      await context.close();
      await server.admin('/_node/_local/_config/chttpd_auth/timeout', { method: 'DELETE' });
    }
  });

  test('when the shown end of the session has passed, the page looks again and offers the login', async () => {
    const put = await server.admin('/_node/_local/_config/chttpd_auth/timeout', { method: 'PUT', body: JSON.stringify('3') });
    assert.equal(put.status, 200, put.text);
    const { context, page, watch } = await newContext();
    try {
      await openLoginPage(page);
      await submitLogin(page, 'root', 'r00t-pass');
      await page.locator('#user-expiry').filter({ hasText: '3 s: the server' }).waitFor();
      assert.match(await textOf(page, '#user-expiry'), /\(3 seconds after your last request/);
      assert.equal(await waitForText(page, '#status'), 'Logged in as root.');
      await page.locator('#status').filter({ hasText: 'Your session has expired. Please log in again.' }).waitFor({ timeout: 15_000 });
      assert.ok(await page.isVisible('#login-form'));
      assert.ok(await page.isHidden('#session-section'));
      watch.assertClean(server.url);
    } finally {
      await context.close();
      await server.admin('/_node/_local/_config/chttpd_auth/timeout', { method: 'DELETE' });
    }
  });

  test('keyboard only: Tab reaches name, password, code and button in order with a visible focus; Enter logs in and out', async () => {
    const { context, page, watch } = await newContext();
    try {
      await openLoginPage(page);
      await page.keyboard.press('Tab');
      assert.equal(await focusedId(page), 'name');
      assert.deepEqual(await focusOutline(page), { style: 'solid', width: '3px' }, 'the focus ring shows');
      await page.keyboard.type('kim');
      await page.keyboard.press('Tab');
      assert.equal(await focusedId(page), 'password');
      await page.keyboard.type('kim-pw');
      assert.deepEqual(await focusOutline(page), { style: 'solid', width: '3px' });
      await screenshot(page, '10-keyboard-focus');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#session-section', { state: 'visible' });
      assert.equal(await waitForText(page, '#status'), 'Logged in as kim.');
      assert.equal(await textOf(page, '#user-name'), 'kim');
      assert.equal(await focusedId(page), 'session-heading');

      await page.keyboard.press('Tab');
      assert.equal(await focusedId(page), 'logout-button');
      assert.deepEqual(await focusOutline(page), { style: 'solid', width: '3px' });
      await page.keyboard.press('Enter');
      assert.equal(await waitForText(page, '#status'), 'You are logged out.');
      assert.equal(await focusedId(page), 'name');
      for (const id of ['password', 'token', 'login-button']) {
        await page.keyboard.press('Tab');
        assert.equal(await focusedId(page), id);
      }
      watch.assertClean(server.url);
    } finally {
      await context.close();
    }
  });

  test('at a phone\'s width (375 px) nothing scrolls sideways, before and after login', async () => {
    const { context, page, watch } = await newContext(PHONE);
    try {
      await page.goto(`${server.url}/private`);
      await page.waitForLoadState('networkidle');
      assert.equal(new URL(page.url()).pathname, LOGIN_PAGE);
      assert.equal(await textOf(page, '#reason-text'), NOT_AUTHORIZED_DB);
      await assertNoHorizontalScroll(page);
      const button = await page.locator('#login-button').boundingBox();
      assert.ok(button && button.x >= 0 && button.x + button.width <= 375 && button.height >= 44, `login button ${JSON.stringify(button)}`);
      await screenshot(page, '11-phone-login');
      await Promise.all([submitLogin(page, 'pat', 'pat-pw'), page.waitForURL(`${server.url}/private`)]);
      await openLoginPage(page);
      await page.waitForSelector('#session-section', { state: 'visible' });
      await assertNoHorizontalScroll(page);
      await screenshot(page, '12-phone-session', { fullPage: true });
      watch.assertClean(server.url);
    } finally {
      await context.close();
    }
  });

  test('a return address off this origin is ignored, and the reason is shown as text, never as HTML', async () => {
    const { context, page, watch } = await newContext();
    try {
      const reason = '<img src=/x onerror=alert(1)><b>Bold</b>';
      await openLoginPage(page, `?return=${encodeURIComponent('//evil.example/')}&reason=${encodeURIComponent(reason)}`);
      assert.equal(await textOf(page, '#reason-text'), reason);
      assert.equal(await page.locator('#reason img, #reason b').count(), 0, 'no element made from the reason');
      assert.ok(await page.isVisible('#return-ignored'));
      assert.ok(await page.isHidden('#return-note'));
      await submitLogin(page, 'rita', 'rita-pw');
      await page.waitForSelector('#session-section', { state: 'visible' });
      assert.equal(new URL(page.url()).pathname, LOGIN_PAGE, 'the page stays on this server');
      assert.equal(await waitForText(page, '#status'), 'Logged in as rita.');
      assert.ok(await page.isHidden('#login-section'), 'the login form goes once logged in here');
      assert.ok(await page.isHidden('#reason'));
      await screenshot(page, '13-return-ignored');
      watch.assertClean(server.url);
    } finally {
      await context.close();
    }
  });

  test('a logged-in user sent to the page by an admin-only path sees both the session and a login as another user', async () => {
    const { context, page, watch } = await newContext();
    try {
      await openLoginPage(page);
      await submitLogin(page, 'kim', 'kim-pw');
      await page.waitForSelector('#session-section', { state: 'visible' });
      await page.goto(`${server.url}/_all_dbs`);
      await page.waitForLoadState('networkidle');
      assert.equal(page.url(), `${server.url}${LOGIN_PAGE}?return=%2F_all_dbs&reason=You%20are%20not%20a%20server%20admin.`);
      await page.waitForSelector('#session-section', { state: 'visible' });
      assert.equal(await textOf(page, '#reason-text'), 'You are not a server admin.');
      assert.equal(await textOf(page, '#user-name'), 'kim');
      assert.ok(await page.isVisible('#login-form'));
      assert.equal(await textOf(page, '#login-heading'), 'Log in as another user');
      assert.equal(await page.getAttribute('#continue-link', 'href'), '/_all_dbs');
      await screenshot(page, '14-another-user', { fullPage: true });
      await Promise.all([submitLogin(page, 'root', 'r00t-pass'), page.waitForURL(`${server.url}/_all_dbs`)]);
      assert.match(await textOf(page, 'body'), /"private"/);
      watch.assertClean(server.url);
    } finally {
      await context.close();
    }
  });
});
