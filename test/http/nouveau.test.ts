import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';

/**
 * `_nouveau` full-text search over HTTP on each storage backend, with the documents and index of
 * CouchDB's own `test/elixir/test/nouveau_test.exs` and the answers it expects (doc3's text is
 * as long as doc4's here, so that term frequency alone decides their relevance under any ranking).
 */
const INDEX = `function (doc) {
  index("string", "foo", doc.foo, {store: true});
  index("double", "bar", doc.bar, {store: true});
  index("stored", "baz", doc.foo);
  if (doc.baz) { index("text", "txt", doc.baz); }
  if (doc.title) { index("text", "default", doc.title); }
}`;

const DOCS = [
  { _id: 'doc4', foo: 'foo', bar: 42, baz: 'hello hello there', title: 'The quick brown fox jumps' },
  { _id: 'doc3', foo: 'bar', bar: 12.0, baz: 'hello dear friend', title: 'A lazy dog sleeps' },
  { _id: 'doc1', foo: 'baz', bar: 0, baz: 'there', title: 'Quick thinking' },
  { _id: 'doc2', foo: 'foobar', bar: 100, baz: 'hi', title: 'brown paper packages' },
];

describeOnEachBackend('Nouveau search', (server: () => TestServer) => {
  const url = '/search/_design/foo/_nouveau/bar';
  const get = async (query: Record<string, string>) => server().admin(`${url}?${new URLSearchParams(query)}`);
  const post = async (body: object) => server().admin(url, { method: 'POST', body });
  const ids = (res: { body: { hits: { id: string }[] } }): string[] => res.body.hits.map((hit) => hit.id);
  const search = async (q: string, extra: object = {}): Promise<string[]> => {
    const res = await post({ q, limit: 100, ...extra });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return ids(res);
  };

  before(async () => {
    assert.equal((await server().admin('/search', { method: 'PUT' })).status, 201);
    assert.equal((await server().admin('/search/_bulk_docs', { method: 'POST', body: { docs: DOCS } })).status, 201);
    const ddoc = { nouveau: { bar: { default_analyzer: 'standard', index: INDEX }, english: { default_analyzer: 'english', index: INDEX } } };
    assert.equal((await server().admin('/search/_design/foo', { method: 'PUT', body: ddoc })).status, 201);
  });

  test('*:* finds every indexed document, ordered by id after the equal scores, with the stored fields', async () => {
    const res = await get({ q: '*:*', include_docs: 'true' });
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res), ['doc1', 'doc2', 'doc3', 'doc4']);
    assert.equal(res.body.total_hits, 4);
    assert.equal(res.body.total_hits_relation, 'EQUAL_TO');
    assert.deepEqual(res.body.hits[0].fields, { foo: 'baz', bar: 0, baz: 'baz' });
    assert.equal(res.body.hits[0].doc._id, 'doc1');
    assert.deepEqual(res.body.hits[0].order[1], { '@type': 'string', value: 'doc1' });
    assert.equal(res.body.counts, null);
    assert.equal(res.body.ranges, null);
  });

  test('a term orders its hits by relevance: the document saying hello twice first', async () => {
    const res = await get({ q: 'txt:hello' });
    assert.deepEqual(ids(res), ['doc4', 'doc3']);
    assert.ok(res.body.hits[0].order[0].value > res.body.hits[1].order[0].value, JSON.stringify(res.body.hits));
    assert.equal(res.body.hits[0].order[0]['@type'], 'float');
    assert.deepEqual(await search('txt:hello', { sort: '-<score>' }), ['doc4', 'doc3']);
    assert.deepEqual(await search('txt:hello', { sort: '<score>' }), ['doc3', 'doc4']);
  });

  test('query forms: string fields, phrases, the default field, boolean operators, wildcards, numeric ranges', async () => {
    assert.deepEqual(await search('foo:bar'), ['doc3']);
    assert.deepEqual(await search('"quick brown"'), ['doc4']);
    assert.deepEqual(await search('quick'), ['doc1', 'doc4'].sort(), 'unqualified terms search the field default');
    assert.deepEqual((await search('quick AND brown')), ['doc4']);
    assert.deepEqual((await search('quick -fox')), ['doc1']);
    assert.deepEqual((await search('txt:hello AND NOT foo:foo')), ['doc3']);
    assert.deepEqual((await search('foo:foo OR foo:baz', { sort: '_id' })), ['doc1', 'doc4']);
    assert.deepEqual((await search('txt:hello AND bar:[20 TO *]')), ['doc4']);
    assert.deepEqual(await search('bar:[10.0 TO 20.0]'), ['doc3']);
    assert.deepEqual(await search('bar:{0 TO 42]', { sort: 'bar' }), ['doc3', 'doc4']);
    assert.deepEqual(await search('bar:100'), ['doc2']);
    assert.deepEqual(await search('foo:foo*', { sort: 'foo' }), ['doc4', 'doc2']);
    assert.deepEqual(await search('foo:?a?', { sort: 'foo' }), ['doc3', 'doc1']);
    assert.deepEqual(await search('pack*'), ['doc2']);
    assert.deepEqual(await search('nothing:here'), []);
  });

  test('the english analyzer stems words at both ends', async () => {
    const res = await server().admin('/search/_design/foo/_nouveau/english?q=sleeping');
    assert.deepEqual(ids(res), ['doc3']);
    assert.deepEqual(await search('sleeping'), [], 'the standard analyzer does not stem');
  });

  test('sorting by string and double fields, ascending and descending', async () => {
    assert.deepEqual(await search('*:*', { sort: 'foo' }), ['doc3', 'doc1', 'doc4', 'doc2']);
    assert.deepEqual(await search('*:*', { sort: '-foo' }), ['doc2', 'doc4', 'doc1', 'doc3']);
    assert.deepEqual(await search('*:*', { sort: 'bar' }), ['doc1', 'doc3', 'doc4', 'doc2']);
    assert.deepEqual(await search('*:*', { sort: ['-bar<double>'] }), ['doc2', 'doc4', 'doc3', 'doc1']);
    const res = await get({ q: '*:*', sort: '"bar"' });
    assert.deepEqual(res.body.hits[0].order[0], { '@type': 'double', value: 0 });
  });

  test('pagination: a bookmark continues after the last hit, in any sort', async () => {
    const first = await post({ q: '*:*', limit: 2 });
    assert.deepEqual(ids(first), ['doc1', 'doc2']);
    const second = await post({ q: '*:*', limit: 2, bookmark: first.body.bookmark });
    assert.deepEqual(ids(second), ['doc3', 'doc4']);
    const third = await post({ q: '*:*', limit: 2, bookmark: second.body.bookmark });
    assert.deepEqual(ids(third), []);
    const byBar = await get({ q: '*:*', limit: '3', sort: '"-bar"' });
    assert.deepEqual(ids(byBar), ['doc2', 'doc4', 'doc3']);
    const rest = await get({ q: '*:*', limit: '3', sort: '"-bar"', bookmark: byBar.body.bookmark });
    assert.deepEqual(ids(rest), ['doc1']);
    const relevance = await get({ q: 'txt:hello', limit: '1' });
    assert.deepEqual(ids(await get({ q: 'txt:hello', limit: '1', bookmark: relevance.body.bookmark })), ['doc3']);
  });

  test('counts of string fields and ranges of double fields, as CouchDB answers them', async () => {
    const counts = await post({ q: '*:*', counts: ['foo'] });
    assert.deepEqual(counts.body.counts, { foo: { bar: 1, baz: 1, foo: 1, foobar: 1 } });
    const ranges = await post({ q: '*:*', ranges: { bar: [{ label: 'cheap', min: 0, max: 42 }, { label: 'expensive', min: 42, min_inclusive: false, max: 1000 }] } });
    assert.deepEqual(ranges.body.ranges, { bar: { cheap: 3, expensive: 1 } });
    const open = await post({ q: '*:*', ranges: { bar: [{ label: 'cheap', max: 42 }, { label: 'expensive', min: 42, min_inclusive: false }] }, top_n: 1 });
    assert.deepEqual(open.body.ranges, { bar: { cheap: 3 } });
    const narrowed = await get({ q: 'txt:hello', counts: '["foo"]' });
    assert.deepEqual(narrowed.body.counts, { foo: { bar: 1, foo: 1 } });
  });

  test('errors: a missing index is 404, a query that does not parse or lacks q is 400', async () => {
    const missing = await server().admin('/search/_design/foo/_nouveau/nope?q=*:*');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { error: 'not_found', reason: 'nope not found.' });
    assert.equal((await server().admin('/search/_design/nope/_nouveau/bar?q=*:*')).status, 404);
    const bad = await get({ q: 'foo:(bar' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'bad_request');
    const noQ = await server().admin(url);
    assert.deepEqual([noQ.status, noQ.body.error, noQ.body.reason], [400, 'query_parse_error', 'q parameter is mandatory']);
    assert.equal((await get({ q: '*:*', limit: '0' })).status, 400);
    assert.equal((await get({ q: '*:*', sort: '"txt"' })).status, 400);
    assert.equal((await get({ q: '*:*', bookmark: 'garbage' })).status, 400);
  });

  test('a design document whose index function does not compile is refused on save', async () => {
    const res = await server().admin('/search/_design/broken', { method: 'PUT', body: { nouveau: { a: { index: 'function (doc) {' } } } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'compilation_error');
    const noIndex = await server().admin('/search/_design/broken', { method: 'PUT', body: { nouveau: { a: { default_analyzer: 'standard' } } } });
    assert.deepEqual([noIndex.status, noIndex.body.error], [400, 'invalid_design_doc']);
  });

  test('updates, deletes and purges appear in the results; _nouveau_info follows the sequence', async () => {
    const created = await server().admin('/search/late', { method: 'PUT', body: { foo: 'late', bar: 7, baz: 'hello again' } });
    assert.ok((await search('txt:hello')).includes('late'));
    const updated = await server().admin('/search/late', { method: 'PUT', body: { _rev: created.body.rev, foo: 'later', bar: 8, baz: 'goodbye' } });
    assert.ok(!(await search('txt:hello')).includes('late'));
    assert.deepEqual(await search('foo:later'), ['late']);
    assert.equal((await server().admin(`/search/late?rev=${updated.body.rev}`, { method: 'DELETE' })).status, 200);
    assert.deepEqual(await search('foo:later'), []);
    const gone = await server().admin('/search/gone', { method: 'PUT', body: { foo: 'gone', bar: 1 } });
    assert.deepEqual(await search('foo:gone'), ['gone']);
    assert.equal((await server().admin('/search/_purge', { method: 'POST', body: { gone: [gone.body.rev] } })).status, 201);
    assert.deepEqual(await search('foo:gone'), []);
    const info = await server().admin('/search/_design/foo/_nouveau_info/bar');
    assert.equal(info.status, 200);
    assert.equal(info.body.name, '_design/foo/bar');
    const db = await server().admin('/search');
    assert.equal(info.body.search_index.update_seq, Number.parseInt(String(db.body.update_seq), 10));
    assert.equal(info.body.search_index.num_docs, 4);
    assert.match(info.body.search_index.signature, /^[0-9a-f]{64}$/);
  });

  test('a text field given several values is one field: each value finds the document, once, and an update replaces them all', async () => {
    const multi = '/search/_design/multi/_nouveau/tags';
    const index = 'function (doc) { if (doc.tags) { index("text", "tag", doc.tags[0]); index("text", "tag", doc.tags[1]); } }';
    assert.equal((await server().admin('/search/_design/multi', { method: 'PUT', body: { nouveau: { tags: { index } } } })).status, 201);
    const m1 = await server().admin('/search/m1', { method: 'PUT', body: { tags: ['red apple', 'green pear'] } });
    await server().admin('/search/m2', { method: 'PUT', body: { tags: ['red wine', 'red car'] } });
    const hits = async (q: string) => (await server().admin(`${multi}?q=${encodeURIComponent(q)}`)).body;
    assert.deepEqual((await hits('tag:pear')).hits.map((hit: { id: string }) => hit.id), ['m1']);
    const red = await hits('tag:red');
    assert.deepEqual(red.hits.map((hit: { id: string }) => hit.id).sort(), ['m1', 'm2']);
    assert.equal(red.total_hits, 2);
    await server().admin('/search/m1', { method: 'PUT', body: { _rev: m1.body.rev, tags: ['blue sky', 'grey sea'] } });
    assert.deepEqual((await hits('tag:pear')).hits, []);
    assert.deepEqual((await hits('tag:sea')).hits.map((hit: { id: string }) => hit.id), ['m1']);
    for (const id of ['m1', 'm2']) await server().admin(`/search/${id}?rev=${(await server().admin(`/search/${id}`)).body._rev}`, { method: 'DELETE' });
  });

  test('update=false answers from the index as it is', async () => {
    await server().admin('/search/stale', { method: 'PUT', body: { foo: 'stale', bar: 1 } });
    assert.deepEqual(ids(await get({ q: 'foo:stale', update: 'false' })), []);
    assert.deepEqual(ids(await get({ q: 'foo:stale' })), ['stale']);
    await server().admin('/search/stale?rev=' + (await server().admin('/search/stale')).body._rev, { method: 'DELETE' });
  });

  test('members search; others get 401/403 as for the database', async () => {
    assert.equal((await server().request(`${url}?q=*:*`)).status, 401);
  });
});
