// The admin console (/_utils/) end to end in headless Chromium: sign in through the login page,
// create a database, add a document, edit it (conflicts and a stale edit shown), edit _security,
// create a user, change its roles and reset its password, see and change the configuration, see
// the active tasks and replications, see the metrics, sign out. Each step checks the server's
// state through the HTTP API, not only the page. See docs/console.md.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { chromiumSkipReason, textOf, waitForText } from '../support/browser.js';
import { CONSOLE, consoleShot, settled, signIn, statusAfter, visit, useConsoleSuite } from '../support/console.js';

const DB = 'console-db';

describe('admin console (headless Chromium)', { skip: chromiumSkipReason() }, () => {
  const suite = useConsoleSuite();

  test('signing in: /_utils/ sends an anonymous browser to the login page, which brings it back signed in', async () => {
    const { page } = suite.tab;
    await signIn(page, suite.server);
    assert.equal(await page.title(), 'Databases · Divan');
    assert.match(await textOf(page, '#who'), /^Signed in as root \(_admin\)/);
    assert.equal(await page.getAttribute('#nav a[data-nav="databases"]', 'aria-current'), 'page');
    suite.tab.assertClean();
  });

  test('create a database: it opens, the server has it, and the list shows its counts and size', async () => {
    const { page } = suite.tab;
    await page.fill('#new-db-name', 'Bad Name');
    await page.click('#create-db-button');
    assert.match(await waitForText(page, '#error'), /starts with a lower-case letter/);
    assert.equal(await page.getAttribute('#new-db-name', 'aria-invalid'), 'true');
    await page.fill('#new-db-name', DB);
    await statusAfter(page, () => page.click('#create-db-button'), new RegExp(`Database ${DB} created`));
    assert.equal(await textOf(page, '#view-title'), `Database ${DB}`);
    assert.equal(new URL(page.url()).hash, `#/db/${DB}`);
    assert.equal((await suite.server.admin(`/${DB}`)).status, 200);
    assert.match(await textOf(page, '#db-facts'), /Documents\s*0/);
    await visit(page, '#/', 'Databases');
    const row = page.locator('tr', { has: page.locator(`a[href="#/db/${DB}"]`) });
    assert.equal(await row.locator('td[data-label="Documents"]').textContent(), '0');
    assert.match((await row.locator('td[data-label="Size on disk"]').textContent()) ?? '', /\d+(\.\d)? (B|KiB|MiB)/);
    await consoleShot(page, 'databases');
    suite.tab.assertClean();
  });

  test('add a document through the editor: a generated id is offered, the document is saved', async () => {
    const { page } = suite.tab;
    await visit(page, `#/db/${DB}`, `Database ${DB}`);
    await page.click('#new-doc-link');
    await page.locator('#view-title').filter({ hasText: `New document in ${DB}` }).waitFor();
    const offered = JSON.parse(await page.inputValue('#doc-json')) as { _id: string };
    assert.match(offered._id, /^[0-9a-f]{32}$/, 'an id from /_uuids');
    await page.fill('#doc-json', '{ "_id": "first", "title": ');
    await page.click('#save-doc');
    assert.match(await waitForText(page, '#error'), /^This is not valid JSON/);
    await page.fill('#doc-json', JSON.stringify({ _id: 'first', title: 'Hello', tags: ['a'] }));
    const saved = await statusAfter(page, () => page.click('#save-doc'), /^Saved first: revision 1-/);
    const doc = (await suite.server.admin(`/${DB}/first`)).body as Record<string, unknown>;
    assert.equal(doc['title'], 'Hello');
    assert.ok(saved.endsWith(`${String(doc['_rev'])}.`));
    assert.equal(await textOf(page, '#view-title'), 'Document first');
    suite.tab.assertClean();
  });

  test('edit the document: the new revision is stored; a stale edit is refused with the reason', async () => {
    const { page } = suite.tab;
    const edited = JSON.parse(await page.inputValue('#doc-json')) as Record<string, unknown>;
    edited['title'] = 'Hello again';
    await page.fill('#doc-json', JSON.stringify(edited, null, 2));
    await statusAfter(page, () => page.click('#save-doc'), /^Saved first: revision 2-/);
    assert.equal(((await suite.server.admin(`/${DB}/first`)).body as Record<string, unknown>)['title'], 'Hello again');
    await consoleShot(page, 'document');
    // Someone else writes meanwhile: saving the page's revision is a conflict, said in words.
    const current = (await suite.server.admin(`/${DB}/first`)).body as Record<string, unknown>;
    assert.equal((await suite.server.admin(`/${DB}/first`, { method: 'PUT', body: { ...current, title: 'theirs' } })).status, 201);
    await page.fill('#doc-json', (await page.inputValue('#doc-json')).replace('Hello again', 'mine'));
    await page.click('#save-doc');
    assert.match(await waitForText(page, '#error'), /changed since you opened it.*409 conflict/);
    assert.equal(((await suite.server.admin(`/${DB}/first`)).body as Record<string, unknown>)['title'], 'theirs', 'nothing overwritten');
    suite.tab.assertClean();
  });

  test('a conflicted document lists its other revisions; one is opened and discarded', async () => {
    const { page } = suite.tab;
    const branch = await suite.server.admin(`/${DB}/_bulk_docs`, { method: 'POST', body: { new_edits: false, docs: [{ _id: 'first', _rev: '2-0123456789abcdef0123456789abcdef', title: 'from a replica' }] } });
    assert.equal(branch.status, 201, branch.text);
    const { _conflicts: conflicts } = (await suite.server.admin(`/${DB}/first?conflicts=true`)).body as { _conflicts: string[] };
    assert.equal(conflicts.length, 1);
    await visit(page, `#/db/${DB}/doc/first`, 'Document first');
    await page.locator('#conflicts').waitFor();
    assert.match(await textOf(page, '#conflicts-heading'), /Conflicts: 1 other revision$/);
    assert.equal(await page.locator('#doc-json').inputValue().then((text) => text.includes('_conflicts')), false, 'the editor holds the document only');
    await consoleShot(page, 'conflicts');
    await page.click(`#conflicts a:text-is("${conflicts[0]}")`);
    await page.locator('#view .notice').filter({ hasText: `You are looking at revision ${conflicts[0]}` }).waitFor();
    assert.equal(await page.locator('#attachment-files').count(), 0, 'no upload onto an older revision: its attachments are read, not changed');
    assert.match(await page.inputValue('#doc-json'), /from a replica/);
    await visit(page, `#/db/${DB}/doc/first`, 'Document first');
    await statusAfter(page, () => page.click(`button[aria-label="Discard conflicting revision ${conflicts[0]}"]`), /discarded/);
    assert.equal(((await suite.server.admin(`/${DB}/first?conflicts=true`)).body as Record<string, unknown>)['_conflicts'], undefined);
    assert.equal(await page.locator('#conflicts').count(), 0);
    suite.tab.assertClean();
  });

  test('attachments: uploaded from the file picker with progress, listed, downloaded as a file, deleted', async () => {
    const { page } = suite.tab;
    assert.equal((await suite.server.admin(`/${DB}/with-file`, { method: 'PUT', body: { kind: 'files' } })).status, 201);
    await visit(page, `#/db/${DB}/doc/with-file`, 'Document with-file');
    assert.match(await textOf(page, '#attachments'), /No attachments yet/);
    // A few megabytes, so that the upload takes more than one progress event.
    const big = Buffer.alloc(3 * 1024 * 1024, 'divan ');
    await page.setInputFiles('#attachment-files', [
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello file') },
      { name: 'big.bin', mimeType: 'application/octet-stream', buffer: big },
    ]);
    await page.locator('#status').filter({ hasText: /^Uploaded notes\.txt, big\.bin: revision 3-/ }).waitFor({ timeout: 60_000 });
    await settled(page);
    const stored = (await suite.server.admin(`/${DB}/with-file`)).body as { _attachments: Record<string, { length: number; content_type: string }> };
    assert.equal(stored._attachments['big.bin']?.length, big.length);
    assert.equal(stored._attachments['notes.txt']?.content_type, 'text/plain');
    assert.match(await textOf(page, '#attachments tbody tr:has-text("notes.txt")'), /notes\.txt\s*text\/plain\s*10 B/);
    assert.match(await textOf(page, '#attachments tbody tr:has-text("big.bin")'), /3\.0 MiB/);
    assert.equal(await page.locator('#attachments a[href]').count(), 0, 'no link leads the browser to an attachment\'s URL');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button[aria-label="Download notes.txt"]')]);
    assert.equal(download.suggestedFilename(), 'notes.txt');
    const path = await download.path();
    assert.equal(readFileSync(path, 'utf8'), 'hello file');
    await consoleShot(page, 'attachments');
    await statusAfter(page, () => page.click('button[aria-label="Delete attachment big.bin"]'), /Attachment big\.bin deleted/);
    const after = (await suite.server.admin(`/${DB}/with-file`)).body as { _attachments: Record<string, unknown> };
    assert.deepEqual(Object.keys(after._attachments), ['notes.txt']);
    suite.tab.assertClean();
  });

  test('edit _security: admins and members are saved, other members of the object kept', async () => {
    const { page } = suite.tab;
    assert.equal((await suite.server.admin(`/${DB}/_security`, { method: 'PUT', body: { members: { names: [], roles: [] }, custom: { kept: true } } })).status, 200);
    await visit(page, `#/db/${DB}`, `Database ${DB}`);
    await page.click('#security-link');
    await page.locator('#view-title').filter({ hasText: `Security of ${DB}` }).waitFor();
    await page.fill('#admins-names', 'dora');
    await page.fill('#members-names', 'alice, bob');
    await page.fill('#members-roles', 'readers');
    await statusAfter(page, () => page.click('#save-security'), new RegExp(`The _security of ${DB} is saved`));
    const security = (await suite.server.admin(`/${DB}/_security`)).body as Record<string, unknown>;
    assert.deepEqual(security, { members: { names: ['alice', 'bob'], roles: ['readers'] }, admins: { names: ['dora'], roles: [] }, custom: { kept: true } });
    assert.match(await textOf(page, '#security-json'), /"readers"/);
    await consoleShot(page, 'security');
    suite.tab.assertClean();
  });

  test('create a user, change its roles, reset its password: the old password then fails', async () => {
    const { page } = suite.tab;
    await visit(page, '#/users', 'Users');
    await page.fill('#new-user-name', 'carol');
    await page.fill('#new-user-password', 'carol-first');
    await page.fill('#new-user-roles', 'readers, editors');
    await statusAfter(page, () => page.click('#create-user'), /^User carol created/);
    assert.equal(await textOf(page, '#view-title'), 'User carol');
    assert.equal((await suite.server.request('/_session', { method: 'POST', body: { name: 'carol', password: 'carol-first' } })).status, 200);
    await page.fill('#user-roles-input', 'readers');
    await statusAfter(page, () => page.click('#save-roles'), /roles of carol are saved/);
    assert.deepEqual(((await suite.server.admin('/_users/org.couchdb.user:carol')).body as { roles: string[] }).roles, ['readers']);
    await page.fill('#reset-password', 'carol-second');
    await page.fill('#reset-password-again', 'carol-typo');
    await page.click('#save-password');
    assert.match(await waitForText(page, '#error'), /two passwords differ/);
    await page.fill('#reset-password-again', 'carol-second');
    await statusAfter(page, () => page.click('#save-password'), /password of carol is reset/);
    assert.equal((await suite.server.request('/_session', { method: 'POST', body: { name: 'carol', password: 'carol-first' } })).status, 401);
    assert.equal((await suite.server.request('/_session', { method: 'POST', body: { name: 'carol', password: 'carol-second' } })).status, 200);
    await consoleShot(page, 'user');
    await visit(page, '#/users', 'Users');
    assert.match(await textOf(page, 'table'), /carol\s*readers/);
    await consoleShot(page, 'users');
    suite.tab.assertClean();
  });

  test('configuration: the sections are shown, a value is set, changed in place and removed', async () => {
    const { page } = suite.tab;
    await visit(page, '#/config', 'Configuration');
    assert.ok(await page.locator('#config-sections h2', { hasText: '[chttpd_auth]' }).isVisible());
    await page.fill('#config-section', 'console_test');
    await page.fill('#config-key', 'answer');
    await page.fill('#config-value', '41');
    await statusAfter(page, () => page.click('#config-set'), /console_test\/answer is set/);
    assert.equal((await suite.server.admin('/_node/_local/_config/console_test/answer')).body, '41');
    await page.fill('#config-filter', 'console_test');
    assert.equal(await page.locator('#config-sections tbody tr:visible').count(), 1, 'the filter leaves one row');
    await page.click('button[aria-label="Edit console_test/answer"]');
    await page.fill('input.config-input', '42');
    await statusAfter(page, () => page.click('form[aria-label="Change console_test/answer"] button[type="submit"]'), /answer is saved/);
    assert.equal((await suite.server.admin('/_node/_local/_config/console_test/answer')).body, '42');
    await page.fill('#config-filter', 'iterations');
    await consoleShot(page, 'config');
    await page.fill('#config-filter', 'console_test');
    await statusAfter(page, () => page.click('button[aria-label="Remove console_test/answer"]'), /answer is removed/);
    assert.equal((await suite.server.admin('/_node/_local/_config/console_test/answer')).status, 404);
    suite.tab.assertClean();
  });

  test('tasks and replications: the active tasks, the _replicator documents without credentials, the scheduler or why not', async () => {
    const { page } = suite.tab;
    // The server creates `_replicator` at start, as it does `_users`.
    assert.equal((await suite.server.admin('/_replicator')).status, 200);
    const rep = { source: 'http://bob:secret-pw@example.org:5984/a', target: { url: 'http://127.0.0.1:5984/b' }, continuous: true };
    assert.equal((await suite.server.admin('/_replicator/nightly', { method: 'PUT', body: rep })).status, 201);
    // The replication's task may start while the page loads: the page is judged against a server
    // that had the same number of tasks just before and just after it was drawn.
    for (let attempt = 0; ; attempt++) {
      const before = ((await suite.server.admin('/_active_tasks')).body as unknown[]).length;
      await visit(page, '#/tasks', 'Tasks and replications');
      const activeText = await textOf(page, '#active-tasks');
      const rows = await page.locator('#active-tasks tbody tr').count();
      const after = ((await suite.server.admin('/_active_tasks')).body as unknown[]).length;
      if (before !== after && attempt < 10) continue;
      if (after === 0) assert.match(activeText, /No active tasks/);
      else assert.ok(rows >= 1, activeText);
      break;
    }
    const row = page.locator('#replications tbody tr', { hasText: 'nightly' });
    assert.equal(await row.locator('td[data-label="Source"]').textContent(), 'http://example.org:5984/a');
    assert.equal(await row.locator('td[data-label="Kind"]').textContent(), 'continuous');
    assert.doesNotMatch(await textOf(page, '#view'), /secret-pw/);
    const jobs = await suite.server.admin('/_scheduler/jobs');
    if (jobs.status === 200) assert.ok(await page.locator('#scheduler table, #scheduler .empty').count());
    else assert.match(await textOf(page, '#scheduler-unavailable'), new RegExp(`answered ${jobs.status}`));
    await consoleShot(page, 'tasks');
    suite.tab.assertClean();
  });

  test('metrics: real figures when the server has /_node/_local/_stats, else a clear note of why not', async () => {
    const { page } = suite.tab;
    await visit(page, '#/metrics', 'Metrics');
    const stats = await suite.server.admin('/_node/_local/_stats');
    if (stats.status === 200) {
      await page.locator('#all-metrics-heading').waitFor();
      assert.ok((await page.locator('#view tbody tr').count()) > 0, 'every metric in the table');
      assert.equal(await page.locator('#metrics-empty').count(), 0);
      const requests = (stats.body as { couchdb?: { httpd?: { requests?: { value?: unknown } } } }).couchdb?.httpd?.requests?.value;
      if (typeof requests === 'number') {
        const card = page.locator('#metrics-glance .card', { hasText: 'HTTP requests' });
        const shown = Number((await card.locator('dd').textContent())?.replace(/\D/g, ''));
        assert.ok(shown > 0 && shown <= requests, `the request counter read by the page (${shown}), then by the test (${requests})`);
      }
      await consoleShot(page, 'metrics');
    } else {
      const note = await textOf(page, '#metrics-unavailable');
      assert.match(note, new RegExp(`^Metrics are not available: GET /_node/_local/_stats answered ${stats.status}\\.`));
      await consoleShot(page, 'metrics-unavailable');
    }
    suite.tab.assertClean();
  });

  test('delete the document and the database, each after a confirmation', async () => {
    const { page } = suite.tab;
    await visit(page, `#/db/${DB}/doc/first`, 'Document first');
    await page.click('#delete-doc');
    await statusAfter(page, () => page.click('#confirm-delete-doc'), /Document first deleted/);
    assert.equal((await suite.server.admin(`/${DB}/first`)).status, 404);
    await visit(page, '#/', 'Databases');
    await page.click(`button[aria-label="Delete database ${DB}"]`);
    await page.fill('.confirm-input', 'not-it');
    await page.click('.confirm-form button[type="submit"]');
    assert.match(await waitForText(page, '#error'), /nothing was deleted/);
    assert.equal((await suite.server.admin(`/${DB}`)).status, 200);
    await page.fill('.confirm-input', DB);
    await statusAfter(page, () => page.click('.confirm-form button[type="submit"]'), new RegExp(`Database ${DB} deleted`));
    assert.equal((await suite.server.admin(`/${DB}`)).status, 404);
    suite.tab.assertClean();
  });

  test('signing out ends the session and shows the login page; the console then asks for a login again', async () => {
    const { page, context } = suite.tab;
    await Promise.all([page.waitForURL(/\/_utils\/session\.html\?/), page.click('#sign-out')]);
    await page.waitForLoadState('networkidle');
    assert.equal(await textOf(page, '#reason-text'), 'You signed out of the admin console.');
    assert.equal((await context.cookies(suite.server.url)).find((cookie) => cookie.name === 'AuthSession')?.value ?? '', '');
    await page.goto(`${suite.server.url}${CONSOLE}#/users`);
    await page.waitForURL(/\/_utils\/session\.html\?return=%2F_utils%2F%23%2Fusers/);
    suite.tab.assertClean();
  });
});
