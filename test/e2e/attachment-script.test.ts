// Issue 32 item 1 (CVE-2021-38295): an attachment a member uploads must not run script on the
// server's origin when a signed-in server admin opens it in a browser. The page below tries to
// create a server admin with a synchronous request, so its attempt is over once the page has loaded.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { chromiumSkipReason, launchChromium, DESKTOP } from '../support/browser.js';
import { ADMIN, startServer, type TestServer } from '../support/server.js';

const ATTACK = `<!doctype html><title>report</title><script>
  var xhr = new XMLHttpRequest();
  xhr.open('PUT', '/_node/_local/_config/admins/NAME', false);
  xhr.setRequestHeader('Content-Type', 'application/json');
  xhr.send(JSON.stringify('pwned-password'));
  document.title = 'ran ' + xhr.status;
</script><p>quarterly report</p>`;
const SVG_ATTACK = `<svg xmlns="http://www.w3.org/2000/svg"><script>
  var xhr = new XMLHttpRequest();
  xhr.open('PUT', '/_node/_local/_config/admins/NAME', false);
  xhr.setRequestHeader('Content-Type', 'application/json');
  xhr.send(JSON.stringify('pwned-password'));
</script><circle r="4"/></svg>`;
const MALLORY: [string, string] = ['mallory', 'mallory-pass'];

describe('attachments cannot run script on the server origin (issue 32 item 1, headless Chromium)', { skip: chromiumSkipReason() }, () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    server = await startServer({ ini: '[chttpd_auth]\niterations = 1000\n' });
    browser = await launchChromium();
    const user = { _id: `org.couchdb.user:${MALLORY[0]}`, name: MALLORY[0], type: 'user', roles: [], password: MALLORY[1] };
    assert.equal((await server.admin(`/_users/${user._id}`, { method: 'PUT', body: user })).status, 201);
    assert.equal((await server.admin('/shared', { method: 'PUT' })).status, 201);
    const security = { admins: { names: [], roles: [] }, members: { names: [MALLORY[0]], roles: [] } };
    assert.equal((await server.admin('/shared/_security', { method: 'PUT', body: security })).status, 200);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function upload(id: string, name: string, type: string, text: string, auth: [string, string] = MALLORY): Promise<string> {
    const put = await server.request(`/shared/${id}/${name}`, { method: 'PUT', auth, body: Buffer.from(text), headers: { 'Content-Type': type } });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    return `${server.url}/shared/${id}/${name}`;
  }

  async function adminContext(): Promise<BrowserContext> {
    const context = await browser.newContext(DESKTOP);
    const login = await context.request.post(`${server.url}/_session`, { form: { name: ADMIN[0], password: ADMIN[1] } });
    assert.equal(login.status(), 200);
    return context;
  }

  async function adminExists(name: string): Promise<boolean> {
    return (await server.admin(`/_node/_local/_config/admins/${name}`)).status === 200;
  }

  /** Opens `url` as the signed-in admin; a download (no page) counts as not rendered. */
  async function openAsAdmin(url: string): Promise<'rendered' | 'downloaded'> {
    const context = await adminContext();
    try {
      const page = await context.newPage();
      const download = page.waitForEvent('download', { timeout: 60_000 }).then(() => 'downloaded' as const);
      const load = page.goto(url, { waitUntil: 'load' }).then(() => 'rendered' as const, () => undefined);
      const first = await Promise.race([download, load.then((result) => result ?? download)]);
      download.catch(() => undefined);
      return first;
    } finally {
      await context.close();
    }
  }

  test('issue 32 item 1: a member\'s HTML and SVG attachments opened by a signed-in admin render without script and create no admin', async () => {
    const html = await upload('report', 'report.html', 'text/html', ATTACK.replace('NAME', 'pwned_html'));
    const svg = await upload('chart', 'chart.svg', 'image/svg+xml', SVG_ATTACK.replace('NAME', 'pwned_svg'));
    assert.equal(await openAsAdmin(html), 'rendered', 'shown inline, as CouchDB does');
    assert.equal(await openAsAdmin(svg), 'rendered');
    assert.equal(await adminExists('pwned_html'), false, 'the HTML attachment ran no script');
    assert.equal(await adminExists('pwned_svg'), false, 'the SVG attachment ran no script');
  });

  test('issue 32 item 1: with the policy turned off, a member\'s HTML is downloaded, not rendered, while a design document\'s page runs (the attack is real)', async () => {
    assert.equal((await server.admin('/_node/_local/_config/csp/attachments_enable', { method: 'PUT', body: JSON.stringify('false') })).status, 200);
    try {
      const html = await upload('report2', 'report.html', 'text/html', ATTACK.replace('NAME', 'pwned_member'));
      assert.equal(await openAsAdmin(html), 'downloaded');
      assert.equal(await adminExists('pwned_member'), false);
      const app = await upload('_design/app', 'index.html', 'text/html', ATTACK.replace('NAME', 'pwned_app'), ADMIN);
      assert.equal(await openAsAdmin(app), 'rendered');
      assert.equal(await adminExists('pwned_app'), true, 'without the policy, script in an attachment acts as the admin: what the policy prevents');
    } finally {
      await server.admin('/_node/_local/_config/csp/attachments_enable', { method: 'DELETE' });
      await server.admin('/_node/_local/_config/admins/pwned_app', { method: 'DELETE' });
    }
  });
});
