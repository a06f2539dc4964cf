// The admin console's query pages end to end in headless Chromium: create a view, see a
// compilation error on save, run the view with its options (reduce, group level, keys, ranges,
// include_docs, limit, descending) and see the index's state; write and run a Mango query, read
// its _explain, create an index that the query then uses, delete it. Each step checks the
// server's state over HTTP too. See docs/console.md.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { chromiumSkipReason, textOf, waitForText } from '../support/browser.js';
import { signIn, statusAfter, visit, useConsoleSuite } from '../support/console.js';

const DB = 'fruit';
const FRUIT = [
  { _id: 'apple', type: 'fruit', colour: 'red', year: 2023, price: 3 },
  { _id: 'banana', type: 'fruit', colour: 'yellow', year: 2024, price: 1 },
  { _id: 'cherry', type: 'fruit', colour: 'red', year: 2024, price: 8 },
  { _id: 'leek', type: 'vegetable', colour: 'green', year: 2023, price: 2 },
];

describe('admin console: views and Mango (headless Chromium)', { skip: chromiumSkipReason() }, () => {
  const suite = useConsoleSuite();

  before(async () => {
    assert.equal((await suite.server.admin(`/${DB}`, { method: 'PUT' })).status, 201);
    assert.equal((await suite.server.admin(`/${DB}/_bulk_docs`, { method: 'POST', body: { docs: FRUIT } })).status, 201);
    await signIn(suite.tab.page, suite.server, undefined, undefined, `#/db/${DB}`);
  });

  test('create a view: a map that does not compile is refused with the server\'s reason; a good one is saved and opens', async () => {
    const { page } = suite.tab;
    await page.click('#views-link');
    await page.locator('#view[aria-busy="false"] #view-title', { hasText: `Views of ${DB}` }).waitFor();
    assert.match(await textOf(page, '#view'), /No design documents yet/);
    await page.fill('#new-view-ddoc', 'shop');
    await page.fill('#new-view-name', 'by_colour');
    await page.fill('#new-view-map', 'function (doc) { emit(doc.colour, ');
    await page.click('#create-view');
    assert.match(await waitForText(page, '#error'), /compilation_error/);
    assert.equal(await page.getAttribute('#new-view-map', 'aria-invalid'), 'true');
    assert.equal((await suite.server.admin(`/${DB}/_design/shop`)).status, 404, 'nothing saved');
    await page.fill('#new-view-map', 'function (doc) { if (doc.type === "fruit") emit([doc.colour, doc.year], doc.price); }');
    await page.selectOption('#new-view-reduce', '_sum');
    await statusAfter(page, () => page.click('#create-view'), /View by_colour saved in _design\/shop/);
    assert.equal(await textOf(page, '#view-title'), 'View shop/by_colour');
    const ddoc = (await suite.server.admin(`/${DB}/_design/shop`)).body as { views: Record<string, { map: string; reduce?: string }> };
    assert.equal(ddoc.views['by_colour']?.reduce, '_sum');
    assert.match(await textOf(page, '#index-progress'), /index/i);
    suite.tab.assertClean();
  });

  test('run the view: reduced, grouped by level, the map rows with documents, a key range, descending and limited', async () => {
    const { page } = suite.tab;
    await statusAfter(page, () => page.click('#run-view'), /The view answered 1 row/);
    assert.match(await textOf(page, '#view-results tbody'), /null\s*12/, 'the sum of every fruit price');
    assert.match(await textOf(page, '#index-progress'), /up to date/);
    await page.fill('#view-group-level', '1');
    await statusAfter(page, () => page.click('#run-view'), /The view answered 2 rows/);
    assert.match(await textOf(page, '#view-results tbody'), /\["red"\]\s*11\s*\["yellow"\]\s*1/);
    await page.fill('#view-group-level', '');
    await page.uncheck('#view-reduce-on');
    await page.check('#view-include-docs');
    await page.fill('#view-startkey', '["red"]');
    await page.fill('#view-endkey', '["red", {}]');
    await statusAfter(page, () => page.click('#run-view'), /The view answered 2 rows of 3/);
    const ids = await page.locator('#view-results td[data-label="Id"]').allTextContents();
    assert.deepEqual(ids, ['apple', 'cherry']);
    assert.match(await textOf(page, '#view-results td[data-label="Document"]'), /"colour":"red"/);
    await page.fill('#view-startkey', '');
    await page.fill('#view-endkey', '');
    await page.check('#view-descending');
    await page.fill('#view-limit', '1');
    await statusAfter(page, () => page.click('#run-view'), /The view answered 1 row of 3/);
    assert.deepEqual(await page.locator('#view-results td[data-label="Id"]').allTextContents(), ['banana']);
    await page.uncheck('#view-descending');
    await page.fill('#view-limit', '');
    await page.fill('#view-keys', '[["yellow", 2024], ["red", 2023]]');
    await statusAfter(page, () => page.click('#run-view'), /The view answered 2 rows/);
    assert.deepEqual(await page.locator('#view-results td[data-label="Id"]').allTextContents(), ['banana', 'apple']);
    await page.fill('#view-keys', '');
    await page.fill('#view-key', 'red');
    await page.click('#run-view');
    assert.match(await waitForText(page, '#error'), /key is JSON: a string needs quotes/);
    assert.equal(await page.getAttribute('#view-key', 'aria-invalid'), 'true');
    suite.tab.assertClean();
  });

  test('edit the view: the new map is saved and the next query uses it; a broken reduce is refused', async () => {
    const { page } = suite.tab;
    await page.fill('#view-map', 'function (doc) { emit(doc.colour, doc.price); }');
    await statusAfter(page, () => page.click('#save-view'), /View by_colour saved: revision 2-/);
    await page.fill('#view-key', '"green"');
    await page.uncheck('#view-reduce-on');
    await statusAfter(page, () => page.click('#run-view'), /The view answered 1 row/);
    assert.deepEqual(await page.locator('#view-results td[data-label="Id"]').allTextContents(), ['leek']);
    assert.equal(await page.locator('#view-results td[data-label="Key"]').textContent(), '"green"', 'a key is shown as JSON, as it is typed');
    await page.selectOption('#view-reduce', 'custom');
    await page.fill('#view-reduce-code', 'function (keys, values) { return sum(values ');
    await page.click('#save-view');
    assert.match(await waitForText(page, '#error'), /compilation_error/);
    assert.equal(((await suite.server.admin(`/${DB}/_design/shop`)).body as { _rev: string })._rev.slice(0, 2), '2-', 'nothing saved');
    await visit(page, `#/db/${DB}/views`, `Views of ${DB}`);
    assert.equal(await page.locator('#view a', { hasText: 'by_colour' }).getAttribute('href'), `#/db/${DB}/views/shop/by_colour`);
    suite.tab.assertClean();
  });

  test('a Mango query: a bad selector is refused in the page; results with fields; _explain names the index', async () => {
    const { page } = suite.tab;
    await visit(page, `#/db/${DB}`, `Database ${DB}`);
    await page.click('#mango-link');
    await page.locator('#view[aria-busy="false"] #view-title', { hasText: `Mango query on ${DB}` }).waitFor();
    await page.fill('#mango-selector', '{ "type": ');
    await page.click('#mango-run');
    assert.match(await waitForText(page, '#error'), /selector is not valid JSON/);
    await page.fill('#mango-selector', '{ "type": "fruit", "colour": "red" }');
    await page.fill('#mango-fields', '_id, price');
    await statusAfter(page, () => page.click('#mango-run'), /The query found 2 documents/);
    assert.deepEqual(await page.locator('#mango-results td[data-label="Id"]').allTextContents(), ['apple', 'cherry']);
    assert.equal(await page.locator('#mango-results td[data-label="Document"]').first().textContent(), JSON.stringify({ _id: 'apple', price: 3 }));
    await statusAfter(page, () => page.click('#mango-explain-button'), /would use the index _all_docs/);
    assert.match(await textOf(page, '#mango-explain'), /"selector"/);
    await page.fill('#mango-sort', 'price desc');
    await page.click('#mango-run');
    assert.match(await waitForText(page, '#mango-error'), /400 no_usable_index/);
    suite.tab.assertClean();
  });

  test('create a Mango index: the sorted query then runs and _explain names it; delete it', async () => {
    const { page } = suite.tab;
    await page.fill('#index-fields', 'price');
    await page.fill('#index-name', 'by-price');
    await page.fill('#index-ddoc', 'prices');
    await statusAfter(page, () => page.click('#create-index'), /Index by-price created in _design\/prices/);
    const indexes = (await suite.server.admin(`/${DB}/_index`)).body as { indexes: Array<{ name: string }> };
    assert.deepEqual(indexes.indexes.map((index) => index.name), ['_all_docs', 'by-price']);
    assert.match(await textOf(page, '#mango-index-list'), /by-price\s*_design\/prices\s*json/);
    await page.fill('#mango-selector', '{ "price": { "$gt": 0 } }');
    await page.fill('#mango-sort', 'price desc');
    await page.fill('#mango-fields', '');
    await statusAfter(page, () => page.click('#mango-run'), /The query found 4 documents/);
    assert.deepEqual(await page.locator('#mango-results td[data-label="Id"]').allTextContents(), ['cherry', 'apple', 'leek', 'banana']);
    await statusAfter(page, () => page.click('#mango-explain-button'), /would use the index by-price/);
    await statusAfter(page, () => page.click('button[aria-label="Delete index by-price"]'), /Index by-price deleted/);
    assert.deepEqual(((await suite.server.admin(`/${DB}/_index`)).body as { indexes: Array<{ name: string }> }).indexes.map((index) => index.name), ['_all_docs']);
    assert.equal(await page.locator('button[aria-label="Delete index by-price"]').count(), 0);
    suite.tab.assertClean();
  });
});
