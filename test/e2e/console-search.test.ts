// The admin console's search page end to end in headless Chromium: pick a design document's
// Nouveau index, run a query (with a sort, with the documents), read the hits (id, order, stored
// fields, documents), page on by bookmark, open
// a hit's document; a stored field and a document id holding markup are shown as text and nothing
// of them runs. Each answer is checked against the server's over HTTP. See docs/console.md.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { chromiumSkipReason, textOf, waitForText } from '../support/browser.js';
import { signIn, statusAfter, visit, useConsoleSuite } from '../support/console.js';

const DB = 'library';
const XSS = '<img src=x onerror=window.__xss=1>';
const INDEX = `function (doc) {
  if (doc.title) { index("text", "title", doc.title); index("string", "shelf", doc.shelf, {store: true}); index("stored", "note", doc.note || ""); }
}`;
const BOOKS = [
  { _id: 'fox', title: 'The quick brown fox', shelf: 'a', note: 'first' },
  { _id: 'dog', title: 'A lazy brown dog', shelf: 'b', note: XSS },
  { _id: 'cat', title: 'A brown cat sleeps', shelf: 'c', note: 'third' },
  { _id: XSS, title: 'Brown markup', shelf: 'd', note: 'fourth' },
  { _id: 'owl', title: 'An owl at night', shelf: 'e', note: 'fifth' },
];

describe('admin console: full-text search (headless Chromium)', { skip: chromiumSkipReason() }, () => {
  const suite = useConsoleSuite();

  before(async () => {
    assert.equal((await suite.server.admin(`/${DB}`, { method: 'PUT' })).status, 201);
    assert.equal((await suite.server.admin(`/${DB}/_bulk_docs`, { method: 'POST', body: { docs: BOOKS } })).status, 201);
    const ddoc = { nouveau: { books: { default_analyzer: 'standard', index: INDEX } } };
    assert.equal((await suite.server.admin(`/${DB}/_design/shelves`, { method: 'PUT', body: ddoc })).status, 201);
    await signIn(suite.tab.page, suite.server, undefined, undefined, `#/db/${DB}`);
  });

  test('a database without a Nouveau index says so', async () => {
    const { page } = suite.tab;
    assert.equal((await suite.server.admin('/plain', { method: 'PUT' })).status, 201);
    await visit(page, '#/db/plain/search', 'Search plain');
    assert.match(await textOf(page, '#search-none'), /No design document of this database has a Nouveau index/);
    suite.tab.assertClean();
  });

  test('search from the database page: the hits with their order and stored fields, as the server answers them', async () => {
    const { page } = suite.tab;
    await visit(page, `#/db/${DB}`, `Database ${DB}`);
    await page.click('#search-link');
    await page.locator('#view[aria-busy="false"] #view-title', { hasText: `Search ${DB}` }).waitFor();
    assert.deepEqual(await page.locator('#search-index option').allTextContents(), ['shelves/books']);
    await page.fill('#search-query', '');
    await page.click('#search-run');
    assert.match(await waitForText(page, '#error'), /Type a query/);
    await page.fill('#search-query', 'title:brown');
    await page.fill('#search-limit', '2');
    await statusAfter(page, () => page.click('#search-run'), /The search found 4 hits; 2 shown/);
    const server = (await suite.server.admin(`/${DB}/_design/shelves/_nouveau/books?q=title:brown&limit=2`)).body as { hits: Array<{ id: string; order: Array<{ value: unknown }>; fields: object }>; bookmark: string };
    assert.deepEqual(await page.locator('#search-results td[data-label="Id"]').allTextContents(), server.hits.map((hit) => hit.id));
    assert.deepEqual(await page.locator('#search-results td[data-label="Order"]').allTextContents(), server.hits.map((hit) => JSON.stringify(hit.order.map((part) => part.value))));
    assert.deepEqual(await page.locator('#search-results td[data-label="Fields"]').allTextContents(), server.hits.map((hit) => JSON.stringify(hit.fields)));
    // The next page is the one the bookmark gives, and together they are every hit once.
    await statusAfter(page, () => page.click('#search-next'), /The search found 4 hits; 2 shown/);
    const next = (await suite.server.admin(`/${DB}/_design/shelves/_nouveau/books?q=title:brown&limit=2&bookmark=${encodeURIComponent(server.bookmark)}`)).body as { hits: Array<{ id: string }> };
    const second = await page.locator('#search-results td[data-label="Id"]').allTextContents();
    assert.deepEqual(second, next.hits.map((hit) => hit.id));
    assert.deepEqual([...server.hits.map((hit) => hit.id), ...second].sort(), ['cat', 'dog', 'fox', XSS].sort());
    suite.tab.assertClean();
  });

  test('markup in a document id and a stored field is shown as text, and nothing of it runs', async () => {
    const { page } = suite.tab;
    await page.fill('#search-query', 'title:markup OR title:lazy');
    await page.fill('#search-limit', '10');
    await statusAfter(page, () => page.click('#search-run'), /The search found 2 hits/);
    const ids = await page.locator('#search-results td[data-label="Id"]').allTextContents();
    assert.deepEqual(ids.sort(), ['dog', XSS].sort());
    assert.match(await textOf(page, '#search-results tbody'), /onerror=window.__xss=1/);
    assert.equal(await page.locator('#search-results img').count(), 0, 'no element made of the text');
    assert.equal(await page.evaluate('window.__xss'), undefined);
    suite.tab.assertClean();
  });

  test('a sort and included documents: the hits in the server\'s order, each with its document; a bad sort is refused', async () => {
    const { page } = suite.tab;
    await visit(page, `#/db/${DB}/search`, `Search ${DB}`);
    await page.fill('#search-query', 'title:brown');
    await page.fill('#search-limit', '10');
    await page.fill('#search-sort', '[1]');
    await page.click('#search-run');
    assert.match(await waitForText(page, '#error'), /The sort is a field name/);
    await page.fill('#search-sort', '["-shelf"]');
    await page.check('#search-include-docs');
    await statusAfter(page, () => page.click('#search-run'), /The search found 4 hits; 4 shown/);
    const server = (await suite.server.admin(`/${DB}/_design/shelves/_nouveau/books?q=title:brown&limit=10&sort=${encodeURIComponent('["-shelf"]')}&include_docs=true`)).body as { hits: Array<{ id: string; doc: object }> };
    assert.deepEqual(server.hits.map((hit) => hit.id), [XSS, 'cat', 'dog', 'fox']);
    assert.deepEqual(await page.locator('#search-results td[data-label="Id"]').allTextContents(), server.hits.map((hit) => hit.id));
    assert.deepEqual(await page.locator('#search-results td[data-label="Document"]').allTextContents(), server.hits.map((hit) => JSON.stringify(hit.doc)));
    assert.equal(await page.locator('#search-results img').count(), 0, 'no element made of a document\'s text');
    await page.fill('#search-sort', '');
    await page.uncheck('#search-include-docs');
    suite.tab.assertClean();
  });

  test('a bad query shows the server\'s error; a hit opens its document', async () => {
    const { page } = suite.tab;
    await page.fill('#search-query', 'title:(unclosed');
    await page.click('#search-run');
    assert.match(await waitForText(page, '#search-error'), /400/);
    await page.fill('#search-query', 'title:quick');
    await statusAfter(page, () => page.click('#search-run'), /The search found 1 hit;/);
    await page.locator('#search-results a', { hasText: 'fox' }).click();
    await page.locator('#view[aria-busy="false"] #view-title', { hasText: 'fox' }).waitFor();
    assert.match(await page.inputValue('#doc-json'), /The quick brown fox/);
    suite.tab.assertClean();
  });
});
