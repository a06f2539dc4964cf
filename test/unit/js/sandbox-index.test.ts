import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { DesignDoc } from '../../../src/js/sandbox.js';
import type { JsonObject } from '../../../src/json/json.js';
import { testSandbox } from '../../support/js-sandbox.js';

/** Nouveau index functions in the sandbox: `index(type, name, value, options)` and CouchDB's checks of its arguments. */
describe('index() of Nouveau index functions', () => {
  const sandbox = testSandbox({ maxEmits: 5, maxEmitBytes: 10_000, timeoutMs: 30_000, memoryBytes: 16 * 1024 * 1024 });
  after(() => sandbox.close());
  const ddoc: DesignDoc = {
    _id: '_design/search',
    _rev: '1-a',
    nouveau: {
      books: { index: "function (doc) { index('text', 'title', doc.title, {store: true}); index('double', 'price', doc.price); index('string', 'tag', doc.tag, {facet: true}); index('stored', 'isbn', doc.isbn); }" },
      loose: { index: 'function (doc) { index(doc.type, doc.name, doc.value); }' },
      flood: { index: "function (doc) { for (var i = 0; i < 10; i++) index('double', 'n', i); }" },
      emits: { index: 'function (doc) { emit(doc._id, 1); }' },
    },
    views: { byIndex: { map: "function (doc) { index('text', 'a', 'b'); }" } },
  };

  test('each call becomes a field with its type, name, value and options', async () => {
    const [outcome] = await sandbox.index('db', ddoc, ['nouveau', 'books', 'index'], [{ title: 'Dune', price: 9.5, tag: 'sf', isbn: 42 }].map((doc) => JSON.stringify(doc)));
    assert.deepEqual(outcome!.ok && outcome!.value, [
      { type: 'text', name: 'title', value: 'Dune', store: true, facet: false },
      { type: 'double', name: 'price', value: 9.5, store: false, facet: false },
      { type: 'string', name: 'tag', value: 'sf', store: false, facet: true },
      { type: 'stored', name: 'isbn', value: 42, store: true, facet: false },
    ]);
  });

  const failures: [string, JsonObject, string][] = [
    ['a double that is a string', { type: 'double', name: 'n', value: '1' }, 'type of value must be a number not string'],
    ['a text value that is a number', { type: 'text', name: 't', value: 1 }, 'type of value must be a string not number'],
    ['a string value that is missing', { type: 'string', name: 's' }, 'type of value must be a string not undefined'],
    ['a name starting with an underscore', { type: 'text', name: '_id', value: 'x' }, 'name must not start with an underscore'],
    ['an unknown type', { type: 'date', name: 'd', value: 'x' }, 'date not supported'],
    ['a stored value that is an object', { type: 'stored', name: 's', value: {} }, 'type of [object Object] must be a string or number'],
    ['a name that is not a string', { type: 'text', name: 3, value: 'x' }, 'type of name must be a string not number'],
  ];
  for (const [what, doc, message] of failures) {
    test(`${what} fails the document's call: ${message}`, async () => {
      const [outcome] = await sandbox.index('db', ddoc, ['nouveau', 'loose', 'index'], [doc].map((doc) => JSON.stringify(doc)));
      assert.equal(outcome!.ok, false);
      assert.equal(!outcome!.ok && (outcome!.error as { message: string }).message, message);
    });
  }

  test('index calls are bounded per document as emits are', async () => {
    const [outcome] = await sandbox.index('db', ddoc, ['nouveau', 'flood', 'index'], [{}].map((doc) => JSON.stringify(doc)));
    assert.equal(!outcome!.ok && (outcome!.error as { error: string }).error, 'emit_limit');
  });

  test('emit is not available to index functions, nor index to map functions', async () => {
    const [indexed] = await sandbox.index('db', ddoc, ['nouveau', 'emits', 'index'], [{ _id: 'a' }].map((doc) => JSON.stringify(doc)));
    assert.equal(indexed!.ok, false);
    const [mapped] = await sandbox.map('db', ddoc, ['views', 'byIndex', 'map'], [{ _id: 'a' }]);
    assert.equal(mapped!.ok, false);
  });
});
