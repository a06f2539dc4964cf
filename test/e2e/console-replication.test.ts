// The admin console's replication page end to end in headless Chromium: a one-shot replication
// between two local databases from the form, a continuous one that carries a new document and is
// cancelled, one kept as a _replicator document and cancelled by deleting it; passwords are
// never shown. Each step checks the server's state over HTTP too. See docs/console.md.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { ADMIN } from '../support/server.js';
import { chromiumSkipReason, textOf, waitForText } from '../support/browser.js';
import { consoleShot, signIn, statusAfter, visit, useConsoleSuite } from '../support/console.js';

/** Polls the server until `check` holds (a replication runs on its own time). */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('admin console: replication (headless Chromium)', { skip: chromiumSkipReason() }, () => {
  const suite = useConsoleSuite();

  before(async () => {
    assert.equal((await suite.server.admin('/source-db', { method: 'PUT' })).status, 201);
    const docs = [{ _id: 'one' }, { _id: 'two' }, { _id: 'three' }];
    assert.equal((await suite.server.admin('/source-db/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    await signIn(suite.tab.page, suite.server, undefined, undefined, '#/replication');
  });

  /** Fills both endpoints as local databases with the admin's password. */
  async function fillLocal(source: string, target: string): Promise<void> {
    const { page } = suite.tab;
    await page.fill('#source-location', source);
    await page.fill('#source-password', ADMIN[1]);
    await page.fill('#target-location', target);
    await page.fill('#target-password', ADMIN[1]);
  }

  test('the form checks its endpoints, and a one-shot replication creates the target and copies every document', async () => {
    const { page } = suite.tab;
    assert.equal(await page.inputValue('#source-username'), ADMIN[0], 'the signed-in user by default');
    await page.selectOption('#source-kind', 'remote');
    await page.fill('#source-location', 'source-db');
    await page.click('#start-replication');
    assert.match(await waitForText(page, '#error'), /source is not a URL/);
    assert.equal(await page.getAttribute('#source-location', 'aria-invalid'), 'true');
    await page.selectOption('#source-kind', 'local');
    await fillLocal('source-db', 'copy-db');
    await page.check('#replication-create-target');
    await statusAfter(page, () => page.click('#start-replication'), /^Replication done: 3 documents written, 0 failures\./);
    const copy = (await suite.server.admin('/copy-db/_all_docs')).body as { rows: Array<{ id: string }> };
    assert.deepEqual(copy.rows.map((row) => row.id), ['one', 'three', 'two']);
    assert.equal(await page.inputValue('#source-password'), '', 'the password is not kept in the form');
    assert.doesNotMatch(await textOf(page, '#view'), new RegExp(ADMIN[1]));
    suite.tab.assertClean();
  });

  test('a continuous replication shows in the scheduler\'s jobs, carries a new document, and is cancelled', async () => {
    const { page } = suite.tab;
    await fillLocal('source-db', 'copy-db');
    await page.check('#replication-continuous');
    await statusAfter(page, () => page.click('#start-replication'), /^Continuous replication \S+ started\./);
    const jobs = (await suite.server.admin('/_scheduler/jobs')).body as { jobs: Array<{ id: string }> };
    assert.equal(jobs.jobs.length, 1);
    const id = jobs.jobs[0]!.id;
    const row = page.locator('#replication-jobs tbody tr', { has: page.locator(`code[data-id="${id}"]`) });
    assert.equal(await row.locator('td[data-label="State"]').textContent(), 'running');
    assert.equal(await row.locator('td[data-label="Source"]').textContent(), `${suite.server.url}/source-db/`);
    assert.equal((await suite.server.admin('/source-db/four', { method: 'PUT', body: { late: true } })).status, 201);
    await eventually('the new document in the target', async () => (await suite.server.admin('/copy-db/four')).status === 200);
    await row.locator('td[data-label="Documents written"]').filter({ hasText: /^[1-9]/ }).waitFor({ timeout: 60_000 });
    await consoleShot(page, 'replication');
    assert.doesNotMatch(await textOf(page, '#view'), new RegExp(ADMIN[1]));
    await statusAfter(page, () => page.click(`button[aria-label="Cancel replication ${id}"]`), new RegExp(`Replication ${id.replace(/\+/g, '\\+')} cancelled`));
    assert.deepEqual(((await suite.server.admin('/_scheduler/jobs')).body as { jobs: unknown[] }).jobs, []);
    assert.equal(await row.count(), 0);
    suite.tab.assertClean();
  });

  test('a replication kept as a _replicator document: listed by its id with its state, cancelled by deleting the document', async () => {
    const { page } = suite.tab;
    await visit(page, '#/replication', 'Replication');
    await fillLocal('source-db', 'kept-db');
    await page.check('#replication-create-target');
    await page.check('#replication-continuous');
    await page.check('#replication-persistent');
    await page.fill('#replication-doc-id', 'kept');
    await statusAfter(page, () => page.click('#start-replication'), /^Replication document kept saved/);
    const doc = (await suite.server.admin('/_replicator/kept')).body as { source: { url: string; auth?: unknown } };
    assert.equal(doc.source.url, `${suite.server.url}/source-db`, 'the URL carries no credentials');
    const row = page.locator('#replication-jobs tbody tr', { has: page.locator('a', { hasText: 'kept' }) });
    await row.locator('td[data-label="State"]', { hasText: 'running' }).waitFor({ timeout: 60_000 });
    await eventually('the kept target', async () => ((await suite.server.admin('/kept-db')).body as { doc_count?: number }).doc_count === 4);
    assert.doesNotMatch(await textOf(page, '#view'), new RegExp(ADMIN[1]));
    await statusAfter(page, () => page.click('button[aria-label="Cancel replication kept"]'), /Replication kept cancelled/);
    assert.equal((await suite.server.admin('/_replicator/kept')).status, 404);
    await eventually('the job gone', async () => ((await suite.server.admin('/_scheduler/jobs')).body as { jobs: unknown[] }).jobs.length === 0);
    suite.tab.assertClean();
  });
});
