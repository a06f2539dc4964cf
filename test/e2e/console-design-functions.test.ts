// The admin console runs a design document's show and update functions, end to end in headless
// Chromium: the design documents page lists them; a show's HTML answer (with a script and an
// <img onerror>) is shown as text and in a sandboxed frame, and nothing of it runs in the console;
// an update stamps a field on a document (PUT with an id, POST without one, a form or JSON body)
// and the server's copy has it. See docs/console.md.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { PHONE, assertNoHorizontalScroll, chromiumSkipReason, textOf, waitForText, type ContextWatch } from '../support/browser.js';
import { consoleShot, inContext, signIn, statusAfter, visit, useConsoleSuite } from '../support/console.js';

const DB = 'pages';
const SHOWS = {
  page:
    'function (doc, req) { return "<h1>Hello " + (doc ? doc.name : "nobody") + "</h1>" +' +
    ' "<script>window.__ran = 1; try { parent.__ran = 2; } catch (e) {}</script>" +' +
    ' "<img src=/_utils/divan.svg onerror=\\"window.__ran = 3; try { parent.__ran = 4; } catch (e) {}\\">"; }',
  card: 'function (doc) { return { json: { name: doc && doc.name, shown: true } }; }',
};
const UPDATES = {
  stamp:
    'function (doc, req) { if (!doc) doc = { _id: req.id || req.uuid }; var by = req.form.by;' +
    ' if (!by && req.body && req.body !== "undefined") by = JSON.parse(req.body).by;' +
    ' doc.stamped = by || "nobody"; return [doc, "stamped " + doc._id]; }',
  fails: 'function () { throw { error: "forbidden", reason: "not today" }; }',
};

/** The preview's image, refused by the frame's own policy: the one violation these tests expect. */
const PREVIEW_REFUSAL = /Loading the image '[^']*\/_utils\/divan\.svg' violates [^"]*"default-src 'none'"/;

/** Removes the preview's refusals from the watch (one may arrive after the test looked). */
function dropPreviewRefusals(watch: ContextWatch): number {
  const before = watch.violations.length;
  const others = watch.violations.filter((text) => !PREVIEW_REFUSAL.test(text));
  watch.violations.splice(0, before, ...others);
  return before - others.length;
}

/** Waits for the browser to report the preview's refusal (its console message comes on its own time), then removes it. */
async function previewRefusals(watch: ContextWatch): Promise<number> {
  for (let tries = 0; tries < 200 && !watch.violations.some((text) => PREVIEW_REFUSAL.test(text)); tries += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  return dropPreviewRefusals(watch);
}

describe('admin console: shows and updates (headless Chromium)', { skip: chromiumSkipReason() }, () => {
  const suite = useConsoleSuite();

  before(async () => {
    assert.equal((await suite.server.admin(`/${DB}`, { method: 'PUT' })).status, 201);
    assert.equal((await suite.server.admin(`/${DB}/ann`, { method: 'PUT', body: { name: 'Ann' } })).status, 201);
    const ddoc = { shows: SHOWS, updates: UPDATES, views: { by_name: { map: 'function (doc) { emit(doc.name); }' } } };
    assert.equal((await suite.server.admin(`/${DB}/_design/app`, { method: 'PUT', body: ddoc })).status, 201);
    await signIn(suite.tab.page, suite.server, undefined, undefined, `#/db/${DB}/views`);
  });

  test('the design documents page lists the shows and updates, each a link to the page that runs it', async () => {
    const { page } = suite.tab;
    await page.locator('#view[aria-busy="false"] #view-title', { hasText: `Views of ${DB}` }).waitFor();
    assert.deepEqual(await page.locator('#view td[data-label="Shows"] a').allTextContents(), ['card', 'page']);
    assert.deepEqual(await page.locator('#view td[data-label="Updates"] a').allTextContents(), ['fails', 'stamp']);
    assert.equal(await page.locator('#view td[data-label="Updates"] a', { hasText: 'stamp' }).getAttribute('href'), `#/db/${DB}/design/app/update/stamp`);
    await page.click('#view td[data-label="Shows"] a:text-is("page")');
    await page.locator('#view[aria-busy="false"] #view-title', { hasText: 'Show app/page' }).waitFor();
    assert.equal(await textOf(page, '#function-source'), SHOWS.page);
    dropPreviewRefusals(suite.tab.watch);
    suite.tab.assertClean();
  });

  test('a show\'s HTML is shown as text and in a sandboxed frame: its script and onerror handler never run', async () => {
    const { page } = suite.tab;
    await page.fill('#function-doc-id', 'ann');
    await statusAfter(page, () => page.click('#run-function'), /GET \/pages\/_design\/app\/_show\/page\/ann answered 200/);
    const body = page.locator('#function-answer-body');
    assert.ok(await body.isVisible(), 'the body is on the page');
    assert.match(await textOf(page, '#function-answer-body'), /^<h1>Hello Ann<\/h1><script>window.__ran = 1;/);
    assert.match(await textOf(page, '#function-answer-facts'), /Status\s*200\s*Content type\s*text\/html; charset=utf-8/);
    assert.equal(await page.locator('#view script, #view img, #view h1:text-is("Hello Ann")').count(), 0, 'no element is made of the body in the console');
    const frame = page.locator('#function-answer-preview');
    assert.equal(await frame.getAttribute('sandbox'), '', 'a sandbox with no permission');
    await page.frameLocator('#function-answer-preview').locator('h1', { hasText: 'Hello Ann' }).waitFor();
    const inner = page.frames().find((candidate) => candidate !== page.mainFrame());
    assert.ok(inner !== undefined, 'the preview is a frame of its own');
    // The image's error event comes once it has failed to load: wait for that before looking.
    while ((await inner.evaluate('document.images.length === 1 && document.images[0].complete')) !== true) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await inner.evaluate('window.origin'), 'null', 'the frame has an opaque origin: it cannot reach the console');
    assert.equal(await page.evaluate('window.__ran'), undefined, 'nothing of the show ran in the console');
    assert.equal(await inner.evaluate('window.__ran'), undefined, 'nor in the sandboxed frame');
    // The frame's own policy refuses every load, even of the server's own files (as the signed-in user).
    assert.equal(await inner.evaluate('document.images[0].naturalWidth'), 0, 'the image was not loaded');
    assert.ok((await previewRefusals(suite.tab.watch)) >= 1, `the preview's image refused by its frame's policy: ${suite.tab.watch.violations.join(' | ')}`);
    // A full-page picture leaves the sandboxed frame (a process of its own) blank: the viewport, scrolled to it.
    await page.locator('#function-answer-preview').scrollIntoViewIfNeeded();
    await consoleShot(page, 'show');
    dropPreviewRefusals(suite.tab.watch);
    suite.tab.assertClean();
  });

  test('a show without a document gets null; a JSON answer is shown as text with its content type', async () => {
    const { page } = suite.tab;
    await page.fill('#function-doc-id', '');
    await statusAfter(page, () => page.click('#run-function'), /_show\/page answered 200/);
    assert.match(await textOf(page, '#function-answer-body'), /^<h1>Hello nobody<\/h1>/);
    await visit(page, `#/db/${DB}/design/app/show/card`, 'Show app/card');
    await page.fill('#function-doc-id', 'ann');
    await statusAfter(page, () => page.click('#run-function'), /_show\/card\/ann answered 200/);
    assert.deepEqual(JSON.parse(await textOf(page, '#function-answer-body')), { name: 'Ann', shown: true });
    assert.match(await textOf(page, '#function-answer-facts'), /Content type\s*application\/json/);
    assert.equal(await page.locator('#function-answer-preview').count(), 0, 'only HTML gets a preview');
    await visit(page, `#/db/${DB}/design/app/show/missing`, 'Show app/missing');
    assert.match(await textOf(page, '#function-unavailable'), /_design\/app has no show function named missing/);
    await visit(page, `#/db/${DB}/design/app/list/x`, 'app: no such function page');
    assert.match(await textOf(page, '#function-unavailable'), /runs show and update functions/);
    dropPreviewRefusals(suite.tab.watch);
    suite.tab.assertClean();
  });

  test('an update with an id and a form body is a PUT: the document gets the stamped field and a new revision', async () => {
    const { page } = suite.tab;
    await visit(page, `#/db/${DB}/design/app/update/stamp`, 'Update app/stamp');
    assert.match(await textOf(page, '#function-method'), /Sent as POST \/pages\/_design\/app\/_update\/stamp$/);
    await page.fill('#function-doc-id', 'ann');
    assert.match(await textOf(page, '#function-method'), /Sent as PUT \/pages\/_design\/app\/_update\/stamp\/ann$/);
    await page.fill('#function-body', 'by=console');
    await statusAfter(page, () => page.click('#run-function'), /PUT \/pages\/_design\/app\/_update\/stamp\/ann answered 201/);
    const stored = (await suite.server.admin(`/${DB}/ann`)).body as { name: string; stamped: string; _rev: string };
    assert.equal(stored.stamped, 'console');
    assert.equal(stored.name, 'Ann', 'the rest of the document is kept');
    assert.match(stored._rev, /^2-/);
    assert.equal(await textOf(page, '#function-answer-body'), 'stamped ann');
    assert.match(await textOf(page, '#function-answer-facts'), new RegExp(`Document\\s*ann\\s*New revision\\s*${stored._rev}`));
    await page.locator('#function-answer-preview').scrollIntoViewIfNeeded();
    await consoleShot(page, 'update');
    dropPreviewRefusals(suite.tab.watch);
    suite.tab.assertClean();
  });

  test('an update without an id is a POST with a JSON body: a new document is written; JSON that does not parse is refused in the page', async () => {
    const { page } = suite.tab;
    await page.fill('#function-doc-id', '');
    await page.selectOption('#function-body-type', 'json');
    await page.fill('#function-body', '{ "by": ');
    await page.click('#run-function');
    assert.match(await waitForText(page, '#error'), /The body is not valid JSON/);
    assert.equal(await page.getAttribute('#function-body', 'aria-invalid'), 'true');
    await page.fill('#function-body', '{ "by": "json" }');
    await statusAfter(page, () => page.click('#run-function'), /POST \/pages\/_design\/app\/_update\/stamp answered 201/);
    const id = (await textOf(page, '#function-answer-body')).replace(/^stamped /, '');
    assert.match(id, /^[0-9a-f]{32}$/);
    assert.equal(((await suite.server.admin(`/${DB}/${id}`)).body as { stamped: string }).stamped, 'json');
    dropPreviewRefusals(suite.tab.watch);
    suite.tab.assertClean();
  });

  test('an update that refuses answers with its error, shown with the server\'s reason; nothing is written', async () => {
    const { page } = suite.tab;
    const before = (await suite.server.admin(`/${DB}`)).body as { doc_count: number };
    await visit(page, `#/db/${DB}/design/app/update/fails`, 'Update app/fails');
    await page.click('#run-function');
    assert.match(await waitForText(page, '#error'), /^POST \/pages\/_design\/app\/_update\/fails answered 403 forbidden: not today\.$/);
    assert.match(await textOf(page, '#function-answer-facts'), /Status\s*403/);
    assert.equal(((await suite.server.admin(`/${DB}`)).body as { doc_count: number }).doc_count, before.doc_count);
    dropPreviewRefusals(suite.tab.watch);
    suite.tab.assertClean();
  });

  test('at a phone\'s width (375 px) a function\'s page, its answer and its preview do not scroll sideways', async () => {
    await inContext(suite.browser, suite.server, PHONE, async ({ page, watch }) => {
      await signIn(page, suite.server, undefined, undefined, `#/db/${DB}/design/app/show/page`);
      await page.locator('#view[aria-busy="false"] #view-title', { hasText: 'Show app/page' }).waitFor();
      await page.fill('#function-doc-id', 'ann');
      await statusAfter(page, () => page.click('#run-function'), /answered 200/);
      await page.frameLocator('#function-answer-preview').locator('h1', { hasText: 'Hello Ann' }).waitFor();
      await assertNoHorizontalScroll(page);
      assert.ok((await previewRefusals(watch)) >= 1, 'the preview loaded nothing');
      assert.ok(((await page.locator('#run-function').boundingBox())?.height ?? 0) >= 44, 'the button is finger-sized');
      await visit(page, `#/db/${DB}/views`, `Views of ${DB}`);
      await assertNoHorizontalScroll(page);
    });
  });
});
