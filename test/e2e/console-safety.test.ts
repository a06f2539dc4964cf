// The admin console's safety and reach, in headless Chromium: markup in ids, field names, user
// names and configuration values renders as inert text; paging through documents; keyboard-only
// use with a visible focus; a phone's width on every page; a database admin who is not a server
// admin. See docs/console.md.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../support/server.js';
import { PHONE, assertNoHorizontalScroll, chromiumSkipReason, focusOutline, focusedId, launchChromium, textOf, waitForText } from '../support/browser.js';
import { WIDE, consoleShot, inContext, settled, signIn, statusAfter, visit } from '../support/console.js';

const INI = '[chttpd_auth]\niterations = 1000\n';
const XSS_ID = '<img src=x onerror=window.__xss=1>';
const XSS_FIELD = '<img src=x onerror=window.__xss=2>';
const XSS_USER = '<img src=x onerror=window.__xss=3>';

describe('admin console: inert markup, paging, keyboard, phone, database admins (headless Chromium)', { skip: chromiumSkipReason() }, () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    server = await startServer({ ini: INI });
    browser = await launchChromium();
    assert.equal((await server.admin('/shop', { method: 'PUT' })).status, 201);
    assert.equal((await server.admin('/media', { method: 'PUT' })).status, 201);
    const docs = Array.from({ length: 25 }, (_, index) => ({ _id: `item-${String(index).padStart(2, '0')}`, n: index }));
    assert.equal((await server.admin('/shop/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    assert.equal((await server.admin(`/shop/${encodeURIComponent(XSS_ID)}`, { method: 'PUT', body: { [XSS_FIELD]: XSS_FIELD } })).status, 201);
    const user = { _id: `org.couchdb.user:${XSS_USER}`, name: XSS_USER, type: 'user', roles: [XSS_FIELD], password: 'x-pw' };
    assert.equal((await server.admin(`/_users/${encodeURIComponent(user._id)}`, { method: 'PUT', body: user })).status, 201);
    const dana = { _id: 'org.couchdb.user:dana', name: 'dana', type: 'user', roles: [], password: 'dana-pw' };
    assert.equal((await server.admin('/_users/org.couchdb.user:dana', { method: 'PUT', body: dana })).status, 201);
    assert.equal((await server.admin('/shop/_security', { method: 'PUT', body: { admins: { names: ['dana'], roles: [] }, members: { names: [], roles: [] } } })).status, 200);
    assert.equal((await server.admin('/_node/_local/_config/console_test/markup', { method: 'PUT', body: JSON.stringify(XSS_FIELD) })).status, 200);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('markup in a document id, a field name, a user name, a role and a configuration value is shown as text, never run', async () => {
    await inContext(browser, server, WIDE, async ({ page }) => {
      await signIn(page, server);
      const pages: Array<[string, string | RegExp]> = [
        ['#/db/shop', 'Database shop'],
        [`#/db/shop/doc/${encodeURIComponent(XSS_ID)}`, `Document ${XSS_ID}`],
        ['#/users', 'Users'],
        [`#/users/${encodeURIComponent(XSS_USER)}`, `User ${XSS_USER}`],
        ['#/config', 'Configuration'],
      ];
      for (const [hash, heading] of pages) {
        await visit(page, hash, heading);
        assert.equal(await page.locator('#view img').count(), 0, `no element made from data on ${hash}`);
        assert.equal(await page.evaluate('window.__xss'), undefined, `nothing ran on ${hash}`);
      }
      await visit(page, '#/db/shop', 'Database shop');
      assert.equal(await page.locator('#view a', { hasText: XSS_ID }).count(), 1, 'the id is a link, as text');
      await visit(page, `#/db/shop/doc/${encodeURIComponent(XSS_ID)}`, `Document ${XSS_ID}`);
      assert.deepEqual(Object.keys(JSON.parse(await page.inputValue('#doc-json')) as object), ['_id', '_rev', XSS_FIELD]);
      assert.equal(await page.title(), `Document ${XSS_ID} · Divan`);
      await visit(page, '#/users', 'Users');
      assert.match(await textOf(page, '#view table'), new RegExp(XSS_USER.replace(/[()=<>]/g, '\\$&')));
      await visit(page, '#/config', 'Configuration');
      assert.equal(await textOf(page, 'tr[data-setting="console_test/markup"] td[data-label="Value"]'), XSS_FIELD);
    });
  });

  test('attachments never run on the console\'s origin: raster images preview in an <img>, HTML and SVG do not, a download stays a download; files dropped are uploaded', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const attachments = {
      'pic.png': { content_type: 'image/png', data: png },
      'evil.html': { content_type: 'text/html', data: Buffer.from('<script>parent.__xss=4; opener && (opener.__xss=4)</script>').toString('base64') },
      'evil.svg': { content_type: 'image/svg+xml', data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="window.__xss=5"><script>window.__xss=6</script></svg>').toString('base64') },
      'fake.png': { content_type: 'image/png', data: Buffer.from('<script>window.__xss=7</script>').toString('base64') },
    };
    assert.equal((await server.admin('/media/files', { method: 'PUT', body: { _attachments: attachments } })).status, 201);
    await inContext(browser, server, WIDE, async ({ page }) => {
      await signIn(page, server, undefined, undefined, '#/db/media/doc/files');
      await page.locator('#attachments tbody tr').first().waitFor();
      assert.deepEqual((await page.locator('#attachments img').evaluateAll((images) => images.map((image) => image.getAttribute('alt')))).sort(), ['Preview of fake.png', 'Preview of pic.png']);
      const pic = page.locator('img[alt="Preview of pic.png"]');
      await pic.evaluate((image) => (image as unknown as { decode(): Promise<void> }).decode());
      assert.equal(await pic.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth), 1, 'the image is shown');
      assert.equal(await page.locator('#view a[href*="evil"], #view iframe, #view object, #view embed').count(), 0, 'nothing links to or embeds an attachment');
      const url = page.url();
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('button[aria-label="Download evil.html"]')]);
      assert.equal(download.suggestedFilename(), 'evil.html');
      assert.match(readFileSync(await download.path(), 'utf8'), /<script>/, 'the file as stored');
      assert.equal(page.url(), url, 'the console stayed where it was');
      assert.equal(page.context().pages().length, 1, 'no tab opened on the attachment');
      assert.equal(await page.evaluate('window.__xss'), undefined, 'nothing of the attachments ran');
      // Drag and drop: a file dropped on the zone is uploaded like a chosen one.
      const dataTransfer = await page.evaluateHandle(`(() => {
        const transfer = new DataTransfer();
        transfer.items.add(new File(['dropped text'], 'dropped.txt', { type: 'text/plain' }));
        return transfer;
      })()`);
      await page.dispatchEvent('#attachment-drop', 'dragover', { dataTransfer });
      assert.equal(await page.locator('#attachment-drop.dragging').count(), 1, 'the zone shows it takes the drop');
      await statusAfter(page, () => page.dispatchEvent('#attachment-drop', 'drop', { dataTransfer }), /^Uploaded dropped\.txt: revision 2-/);
      const stored = await server.admin('/media/files/dropped.txt');
      assert.equal(stored.text, 'dropped text');
      assert.equal(await page.evaluate('window.__xss'), undefined);
    });
  });

  test('documents come a page at a time by key (startkey and limit, never skip): 20, then the rest; back; the page size can change', async () => {
    await inContext(browser, server, WIDE, async ({ page }) => {
      const listings: string[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/_all_docs')) listings.push(decodeURIComponent(request.url()));
      });
      await signIn(page, server, undefined, undefined, '#/db/shop');
      assert.equal(await textOf(page, '#docs-range'), '1–20 of 26');
      assert.equal(await page.locator('#view tbody tr').count(), 20);
      assert.equal(await page.locator('#docs-prev').count(), 0, 'no previous page before the first');
      await page.click('#docs-next');
      await page.locator('#docs-range', { hasText: '21–26 of 26' }).waitFor();
      await settled(page);
      assert.match(new URL(page.url()).hash, /^#\/db\/shop\?start=item-19&limit=20$/);
      assert.equal(await page.locator('#docs-next').count(), 0, 'no next page after the last');
      assert.equal(await page.locator('#view tbody tr a').first().textContent(), 'item-19');
      await page.click('#docs-prev');
      await page.locator('#docs-range', { hasText: '1–20 of 26' }).waitFor();
      await page.click('.page-sizes a:text-is("50")');
      await page.locator('#docs-range', { hasText: '1–26 of 26' }).waitFor();
      assert.ok(listings.some((url) => url.includes('startkey="item-19"')), 'a page starts at a key');
      assert.deepEqual(listings.filter((url) => /[?&]skip=(?!1(&|$))/.test(url)), [], 'no page skips more than the one row of its start key');
    });
  });

  test('keyboard only: a skip link first, a visible focus, the page heading focused after each move; a database created with Enter', async () => {
    await inContext(browser, server, WIDE, async ({ page }) => {
      await signIn(page, server);
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate('document.activeElement.className'), 'skip-link');
      assert.ok((await page.locator('.skip-link').boundingBox())!.x >= 0, 'the skip link shows when focused');
      assert.deepEqual(await focusOutline(page), { style: 'solid', width: '3px' });
      const users = page.locator('#nav a[data-nav="users"]');
      for (let step = 0; step < 10 && !(await users.evaluate((link) => link === link.ownerDocument.activeElement)); step++) await page.keyboard.press('Tab');
      assert.deepEqual(await focusOutline(page), { style: 'solid', width: '3px' }, 'the focused link shows it');
      await page.keyboard.press('Enter');
      await page.locator('#view[aria-busy="false"] #view-title', { hasText: 'Users' }).waitFor();
      assert.equal(await focusedId(page), 'view-title', 'focus moves to the new page');
      await visit(page, '#/', 'Databases');
      await page.focus('#new-db-name');
      await page.keyboard.type('typed-db');
      assert.deepEqual(await focusOutline(page), { style: 'solid', width: '3px' });
      await consoleShot(page, 'keyboard-focus');
      await statusAfter(page, () => page.keyboard.press('Enter'), /Database typed-db created/);
      assert.equal((await server.admin('/typed-db')).status, 200);
      // In a textarea Enter is a new line; Ctrl+Enter runs the query from the keyboard.
      await visit(page, '#/db/shop/mango', 'Mango query on shop');
      await page.focus('#mango-selector');
      await page.keyboard.press('Control+A');
      await page.keyboard.type('{ "n": { "$lt": 2 } }');
      await statusAfter(page, () => page.keyboard.press('Control+Enter'), /The query found 2 documents/);
      assert.equal(await focusedId(page), 'mango-selector', 'the focus stays where the person typed');
    });
  });

  test('at a phone\'s width (375 px) no page scrolls sideways and the controls are finger-sized', async () => {
    const ddoc = { views: { by_n: { map: 'function (doc) { emit(doc.n, 1); }', reduce: '_count' } } };
    assert.equal((await server.admin('/media/_design/app', { method: 'PUT', body: ddoc })).status, 201);
    await inContext(browser, server, PHONE, async ({ page }) => {
      await signIn(page, server);
      const pages: Array<[string, string, string]> = [
        ['#/', 'Databases', 'phone-databases'],
        ['#/db/shop', 'Database shop', 'phone-documents'],
        ['#/db/shop/doc/item-00', 'Document item-00', 'phone-document'],
        ['#/db/shop/security', 'Security of shop', 'phone-security'],
        ['#/users', 'Users', 'phone-users'],
        ['#/users/dana', 'User dana', 'phone-user'],
        ['#/config', 'Configuration', 'phone-config'],
        ['#/tasks', 'Tasks and replications', 'phone-tasks'],
        ['#/metrics', 'Metrics', 'phone-metrics'],
        ['#/db/media/views', 'Views of media', 'phone-views'],
        ['#/db/media/views/app/by_n', 'View app/by_n', 'phone-view'],
        ['#/db/shop/mango', 'Mango query on shop', 'phone-mango'],
        ['#/replication', 'Replication', 'phone-replication'],
        ['#/db/media/doc/files', 'Document files', 'phone-attachments'],
      ];
      for (const [hash, heading, shot] of pages) {
        await visit(page, hash, heading);
        await assertNoHorizontalScroll(page);
        const small = await page.$$eval('#view button:visible, #nav a', (elements) => elements.filter((element) => element.getBoundingClientRect().height < 44).map((element) => element.textContent));
        assert.deepEqual(small, [], `controls at least 44 px high on ${hash}`);
        if (['phone-databases', 'phone-document', 'phone-users', 'phone-metrics', 'phone-mango', 'phone-view'].includes(shot)) await consoleShot(page, shot);
      }
    });
  });

  test('when the session ends meanwhile, the console says so and its link signs in again and comes back', async () => {
    await inContext(browser, server, WIDE, async ({ page, context }) => {
      await signIn(page, server, 'dana', 'dana-pw');
      await visit(page, '#/users', 'Users');
      assert.equal(await page.locator('#session-ended').count(), 0, 'a 401 with the session alive (not a server admin) is only the page\'s message');
      await context.clearCookies();
      await visit(page, '#/config', 'Configuration');
      assert.equal(await waitForText(page, '#session-ended'), 'Your session has ended. Sign in again');
      await Promise.all([page.waitForURL(/\/_utils\/session\.html\?/), page.click('#session-ended a')]);
      await page.waitForLoadState('networkidle');
      assert.equal(await textOf(page, '#reason-text'), 'Your session ended. Sign in again to go on.');
      await page.fill('#name', 'dana');
      await page.fill('#password', 'dana-pw');
      await Promise.all([page.waitForURL(`${server.url}/_utils/#/config`), page.click('#login-button')]);
      assert.equal(await waitForText(page, '#who-name'), 'dana');
    });
  });

  test('a database admin who is not a server admin: told the list is for server admins, opens the database by name and edits its _security', async () => {
    await inContext(browser, server, WIDE, async ({ page }) => {
      await signIn(page, server, 'dana', 'dana-pw');
      assert.match(await textOf(page, '#who'), /Signed in as dana \(no roles\)/);
      assert.match(await waitForText(page, '#db-list-unavailable'), /^The list of databases is for server admins: .*\(401 unauthorized: You are not a server admin\.\)/);
      await page.fill('#open-db-name', 'shop');
      await page.press('#open-db-name', 'Enter');
      await page.locator('#view[aria-busy="false"] #view-title', { hasText: 'Database shop' }).waitFor();
      assert.match(await textOf(page, '#docs-range'), /of 26$/);
      await visit(page, '#/db/shop/security', 'Security of shop');
      await page.fill('#members-names', 'erin');
      await statusAfter(page, () => page.click('#save-security'), /is saved/);
      assert.deepEqual(((await server.admin('/shop/_security')).body as { members: unknown }).members, { names: ['erin'], roles: [] });
      await visit(page, '#/config', 'Configuration');
      assert.match(await textOf(page, '#config-unavailable'), /^The configuration is for server admins/);
    });
  });
});
