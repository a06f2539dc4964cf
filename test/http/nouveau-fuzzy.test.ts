import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

/** Fuzzy (`term~n`) and regular-expression (`/re/`) queries, expanded over the terms the index holds. */
const INDEX = 'function (doc) { index("text", "txt", doc.txt); index("string", "genre", doc.genre); index("double", "n", doc.n); }';
const DOCS = [
  { _id: 'a1', txt: 'roam the hills', genre: 'scifi', n: 1 },
  { _id: 'a2', txt: 'foam on the sea', genre: 'sci-fi', n: 2 },
  { _id: 'a3', txt: 'she roams', genre: 'fantasy', n: 3 },
  { _id: 'a4', txt: 'the road', genre: 'fantasy', n: 4 },
  { _id: 'a5', txt: 'cream', genre: 'other', n: 5 },
];

describeOnEachBackend('Nouveau fuzzy and regex queries', (server) => {
  const search = async (q: string): Promise<string[]> => {
    const res = await server().admin('/fuzzy/_design/s/_nouveau/t', { method: 'POST', body: { q, sort: '_id', limit: 100 } });
    assert.equal(res.status, 200, `${q}: ${res.text}`);
    return res.body.hits.map((hit: { id: string }) => hit.id);
  };

  before(async () => {
    assert.equal((await server().admin('/fuzzy', { method: 'PUT' })).status, 201);
    assert.equal((await server().admin('/fuzzy/_bulk_docs', { method: 'POST', body: { docs: DOCS } })).status, 201);
    assert.equal((await server().admin('/fuzzy/_design/s', { method: 'PUT', body: { nouveau: { t: { index: INDEX } } } })).status, 201);
  });

  test('term~1 finds the terms one edit away (insertion, deletion, substitution, transposition), term~ two', async () => {
    assert.deepEqual(await search('txt:roam~1'), ['a1', 'a2', 'a3', 'a4']);
    assert.deepEqual(await search('txt:raom~1'), ['a1']);
    assert.deepEqual(await search('txt:roam~'), ['a1', 'a2', 'a3', 'a4', 'a5']);
    assert.deepEqual(await search('txt:roam~0'), ['a1']);
  });

  test('the fuzzy term of a text field is lower-cased as the analyzer does', async () => {
    assert.deepEqual(await search('txt:ROAM~1'), ['a1', 'a2', 'a3', 'a4']);
  });

  test('a regular expression matches whole terms', async () => {
    assert.deepEqual(await search('txt:/ro.*/'), ['a1', 'a3', 'a4']);
    assert.deepEqual(await search('txt:/oam/'), []);
    assert.deepEqual(await search('txt:/[fc]\\w+/'), ['a2', 'a5']);
  });

  test('on a string field they match whole values; on a double field nothing', async () => {
    assert.deepEqual(await search('genre:scifi~1'), ['a1', 'a2']);
    assert.deepEqual(await search('genre:/sci.*/'), ['a1', 'a2']);
    assert.deepEqual(await search('n:1~1'), []);
  });

  test('they combine with other clauses', async () => {
    assert.deepEqual(await search('txt:/ro.*/ AND genre:fantasy'), ['a3', 'a4']);
    assert.deepEqual(await search('txt:roam~1 -txt:roam'), ['a2', 'a3', 'a4']);
  });

  test('a regular expression that does not compile, and a proximity query: 400', async () => {
    const bad = await server().admin('/fuzzy/_design/s/_nouveau/t?q=txt:/[/');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'bad_request');
    const proximity = await server().admin(`/fuzzy/_design/s/_nouveau/t?q=${encodeURIComponent('txt:"roam hills"~2')}`);
    assert.equal(proximity.status, 400);
  });
});
