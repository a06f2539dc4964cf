// The metrics page's live charts in headless Chromium: drawn from _stats readings, they move when
// the server gets requests (PUTs the page itself never makes, failed logins), the numbers table
// stays, and the readings stop once the page is left. See docs/console.md.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumSkipReason } from '../support/browser.js';
import { consoleShot, signIn, visit, useConsoleSuite } from '../support/console.js';

/** The latest value of a chart's series, as its legend gives it. */
async function latest(page: Page, chart: string, series: string): Promise<number> {
  return Number(await page.getAttribute(`#${chart} li[data-series="${series}"]`, 'data-latest'));
}

describe('admin console: live metrics (headless Chromium)', { skip: chromiumSkipReason() }, () => {
  const suite = useConsoleSuite();

  before(async () => {
    assert.equal((await suite.server.admin('/busy', { method: 'PUT' })).status, 201);
    await signIn(suite.tab.page, suite.server, undefined, undefined, '#/metrics');
  });

  test('the charts fill from _stats readings and move after requests: PUTs by method, 4xx by status, failed logins', async () => {
    const { page } = suite.tab;
    await page.selectOption('#metrics-interval', '1');
    await page.locator('#chart-methods[data-points="2"]').waitFor({ timeout: 60_000 });
    for (const id of ['chart-methods', 'chart-statuses', 'chart-latency', 'chart-auth', 'chart-changes', 'chart-memory']) assert.equal(await page.locator(`#${id} svg`).count(), 1, `${id} is drawn`);
    assert.ok((await page.locator('#view tbody tr').count()) > 0, 'the numbers table stays');
    // Requests the page never makes itself: its readings are GETs of a signed-in user.
    const puts = (await page.locator('#chart-methods li[data-series="PUT"]').getAttribute('data-latest')) ?? '';
    assert.equal(Number(puts), 0, 'no PUT yet');
    for (let index = 0; index < 20; index++) assert.equal((await suite.server.admin(`/busy/doc-${index}`, { method: 'PUT', body: {} })).status, 201);
    for (let index = 0; index < 3; index++) assert.equal((await suite.server.request('/busy', { auth: ['mallory', 'wrong'] })).status, 401);
    await page.locator('#chart-methods li[data-series="PUT"]:not([data-latest="0"]):not([data-latest=""])').waitFor({ timeout: 60_000 });
    assert.ok((await latest(page, 'chart-methods', 'PUT')) > 0);
    assert.ok((await page.locator('#chart-methods polyline[data-series="PUT"]').count()) >= 1, 'the PUT line is drawn');
    await page.locator('#chart-statuses li[data-series="4xx"]:not([data-latest="0"]):not([data-latest=""])').waitFor({ timeout: 60_000 });
    await page.locator('#chart-auth li[data-series="failures"]:not([data-latest="0"]):not([data-latest=""])').waitFor({ timeout: 60_000 });
    assert.ok((await latest(page, 'chart-memory', 'memory')) > 0, 'the server\'s memory in MiB');
    assert.ok((await latest(page, 'chart-latency', 'p95')) >= 0);
    await consoleShot(page, 'metrics-live');
    suite.tab.assertClean();
  });

  test('the readings stop once another page is shown', async () => {
    const { page } = suite.tab;
    await visit(page, '#/', 'Databases');
    const reads: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/_node/_local/_stats')) reads.push(request.url());
    });
    // Five intervals of the fastest setting: a page still reading would have read by then.
    await page.waitForTimeout(5000);
    assert.deepEqual(reads, []);
    suite.tab.assertClean();
  });
});
