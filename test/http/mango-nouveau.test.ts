/**
 * Mango indexes of `type: "nouveau"` and `$text` over HTTP, as CouchDB 3.5.0's `mango_idx_nouveau`,
 * `mango_selector_text` and `mango_cursor_nouveau`: the design document written, listing and
 * deleting, the query a selector becomes, `$text`, sort, bookmark, limit, skip, fields,
 * execution_stats, `_explain`, `use_index`, errors; on every backend.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { createIndex, find, findIds, mangoServer, seed, SERVER_BACKENDS } from '../support/mango.js';

const BOOKS = [
  { _id: 'dune', title: 'Dune', blurb: 'A desert planet and its spice', price: 9.5, genre: 'sf', tags: ['desert', 'classic'], year: 1965 },
  { _id: 'emma', title: 'Emma', blurb: 'A young woman plays matchmaker', price: 4, genre: 'classic', tags: ['romance'], year: 1815 },
  { _id: 'solaris', title: 'Solaris', blurb: 'A planet that is an ocean', price: 12, genre: 'sf', tags: [], year: 1961 },
  { _id: 'ubik', title: 'Ubik', blurb: 'Time runs backwards', price: -1, genre: 'sf', year: 1969, lost: null },
];

const NOUVEAU = { index: { fields: [{ name: 'genre', type: 'string' }, { name: 'price', type: 'number' }, { name: 'year', type: 'number' }] }, type: 'nouveau', ddoc: 'books', name: 'by-genre' };

for (const backend of SERVER_BACKENDS) {
  describe(`${backend}: nouveau Mango indexes`, () => {
    const server = mangoServer(backend);
    before(async () => {
      await seed(server(), 'nv', BOOKS);
      await seed(server(), 'nvall', BOOKS);
      await seed(server(), 'nvnone', BOOKS);
    });

    test('creating a nouveau index writes the design document CouchDB writes, then says exists', async () => {
      assert.deepEqual(await createIndex(server(), 'nv', NOUVEAU), { result: 'created', id: '_design/books', name: 'by-genre' });
      const ddoc = (await server().admin('/nv/_design/books')).body;
      assert.equal(ddoc.language, 'query');
      assert.deepEqual(ddoc.nouveau['by-genre'], {
        index: { default_analyzer: 'keyword', default_field: {}, partial_filter_selector: {}, selector: {}, fields: NOUVEAU.index.fields, index_array_lengths: true },
        analyzer: { name: 'perfield', default: 'keyword', fields: { $default: 'standard' } },
      });
      assert.equal((await createIndex(server(), 'nv', NOUVEAU)).result, 'exists');
    });

    test('GET _index lists a nouveau index with its definition as CouchDB shows it', async () => {
      const listed = (await server().admin('/nv/_index')).body.indexes.find((index: { name: string }) => index.name === 'by-genre');
      assert.deepEqual(listed, {
        ddoc: '_design/books',
        name: 'by-genre',
        type: 'nouveau',
        partitioned: false,
        def: { default_analyzer: 'keyword', default_field: {}, selector: {}, fields: [{ genre: 'string' }, { price: 'number' }, { year: 'number' }], index_array_lengths: true },
      });
    });

    test('$text searches the default field: every string of the listed fields, analysed', async () => {
      assert.deepEqual((await findIds(server(), 'nv', { selector: { $text: 'classic' } })).sort(), ['emma']);
      const both = await find(server(), 'nv', { selector: { $text: 'sf', price: { $gt: 10 } }, execution_stats: true });
      assert.deepEqual(both.body.docs.map((doc: { _id: string }) => doc._id), ['solaris']);
      assert.equal(both.body.warning, undefined);
      assert.equal(both.body.execution_stats.results_returned, 1);
    });

    test('a selector without $text is served by the nouveau index when its fields are indexed, filtered in memory', async () => {
      const res = await find(server(), 'nv', { selector: { genre: 'sf', year: { $lt: 1966 } }, execution_stats: true });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.docs.map((doc: { _id: string }) => doc._id).sort(), ['dune', 'solaris']);
      assert.equal(res.body.warning, undefined);
      assert.deepEqual(await findIds(server(), 'nv', { selector: { price: { $lt: 0 } } }), ['ubik']);
      assert.deepEqual((await findIds(server(), 'nv', { selector: { genre: { $in: ['classic', 'none'] } } })), ['emma']);
    });

    test('sort by a typed field name (escaped as the index names it), limit, skip and bookmark pages', async () => {
      const sorted = await findIds(server(), 'nv', { selector: { genre: 'sf' }, sort: [{ 'year:number': 'desc' }] });
      assert.deepEqual(sorted, ['ubik', 'dune', 'solaris']);
      const first = await find(server(), 'nv', { selector: { genre: 'sf' }, sort: ['year:number'], limit: 2 });
      assert.deepEqual(first.body.docs.map((doc: { _id: string }) => doc._id), ['solaris', 'dune']);
      const next = await find(server(), 'nv', { selector: { genre: 'sf' }, sort: ['year:number'], limit: 2, bookmark: first.body.bookmark });
      assert.deepEqual(next.body.docs.map((doc: { _id: string }) => doc._id), ['ubik']);
      assert.deepEqual(await findIds(server(), 'nv', { selector: { genre: 'sf' }, sort: ['year:number'], skip: 1, limit: 1 }), ['dune']);
      const projected = await find(server(), 'nv', { selector: { genre: 'classic' }, fields: ['title'] });
      assert.deepEqual(projected.body.docs, [{ title: 'Emma' }]);
    });

    test('_explain names the nouveau index and shows the Lucene query, partition and sort', async () => {
      const res = await server().admin('/nv/_explain', { method: 'POST', body: { selector: { $text: 'planet', price: { $gte: 5 } }, sort: [{ 'price:number': 'desc' }] } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.index.type, 'nouveau');
      assert.equal(res.body.query, '(($default:"planet") AND (price_3anumber:[5 TO *]))');
      assert.deepEqual([res.body.partition, res.body.sort], [null, ['-price_3anumber']]);
      assert.equal(res.body.mrargs, undefined);
    });

    test('an index of all fields holds arrays, booleans and nulls; $exists, $size and array elements search it', async () => {
      await createIndex(server(), 'nvall', { index: {}, type: 'nouveau', ddoc: 'all', name: 'all' });
      const def = (await server().admin('/nvall/_design/all')).body.nouveau.all.index;
      assert.equal(def.fields, 'all_fields');
      assert.deepEqual(await findIds(server(), 'nvall', { selector: { tags: { $size: 0 } } }), ['solaris']);
      assert.deepEqual(await findIds(server(), 'nvall', { selector: { tags: { $elemMatch: { $eq: 'romance' } } } }), ['emma']);
      assert.deepEqual(await findIds(server(), 'nvall', { selector: { lost: null } }), ['ubik']);
      assert.deepEqual((await findIds(server(), 'nvall', { selector: { tags: { $exists: false } } })), ['ubik']);
      assert.deepEqual((await findIds(server(), 'nvall', { selector: { $text: 'ocean' } })), ['solaris']);
    });

    test('$text without a nouveau index is 400 no_usable_index; a bad $text argument is 400 bad_arg', async () => {
      const res = await find(server(), 'nvnone', { selector: { $text: 'planet' } });
      assert.deepEqual([res.status, res.body.error], [400, 'no_usable_index']);
      const bad = await find(server(), 'nvnone', { selector: { $text: { a: 1 } } });
      assert.deepEqual([bad.status, bad.body.error], [400, 'bad_arg']);
      const nested = await find(server(), 'nv', { selector: { title: { $text: 'dune' } } });
      assert.deepEqual([nested.status, nested.body.error], [400, 'bad_field']);
      assert.equal(nested.body.reason, 'Invalid field normalization on selector: {"$default":{"$text":"dune"}}');
      const negated = await find(server(), 'nv', { selector: { $not: { $text: 'dune' } } });
      assert.deepEqual([negated.status, negated.body.error], [400, 'bad_arg']);
      const number = await find(server(), 'nv', { selector: { $text: 5 } });
      assert.deepEqual([number.status, number.body], [400, { error: 'invalid_operator', reason: 'Invalid text operator: $text' }]);
    });

    test('bad nouveau definitions are 400 with CouchDB\'s errors', async () => {
      const fields = await server().admin('/nvnone/_index', { method: 'POST', body: { index: { fields: ['a'] }, type: 'nouveau' } });
      assert.deepEqual([fields.status, fields.body.error], [400, 'invalid_index_fields_definition']);
      assert.match(fields.body.reason, /^Text Index field definitions must be of the form/);
      const badType = await server().admin('/nvnone/_index', { method: 'POST', body: { index: { fields: [{ name: 'a', type: 'date' }] }, type: 'nouveau' } });
      assert.deepEqual([badType.status, badType.body.error], [400, 'invalid_index_fields_definition']);
      const key = await server().admin('/nvnone/_index', { method: 'POST', body: { index: { nope: 1 }, type: 'nouveau' } });
      assert.deepEqual([key.status, key.body], [400, { error: 'invalid_key', reason: 'Invalid key nope for this request.' }]);
      const notObject = await server().admin('/nvnone/_index', { method: 'POST', body: { index: 'x', type: 'nouveau' } });
      assert.deepEqual([notObject.status, notObject.body.error], [400, 'invalid_index']);
    });

    test('two usable nouveau indexes need use_index (400 multiple_nouveau_indexes); use_index picks one', async () => {
      await createIndex(server(), 'nv', { index: { fields: [{ name: 'genre', type: 'string' }] }, type: 'nouveau', ddoc: 'other', name: 'genre-only' });
      const res = await find(server(), 'nv', { selector: { genre: 'classic' } });
      assert.deepEqual([res.status, res.body], [400, { error: 'multiple_nouveau_indexes', reason: 'You must specify an index with the `use_index` parameter.' }]);
      assert.deepEqual(await findIds(server(), 'nv', { selector: { genre: 'classic' }, use_index: ['other', 'genre-only'] }), ['emma']);
    });

    test('deleting a nouveau index removes it from the design document, and the document when it was the last', async () => {
      const missing = await server().admin('/nv/_index/_design/other/nouveau/nope', { method: 'DELETE' });
      assert.deepEqual([missing.status, missing.body.error], [404, 'not_found']);
      const res = await server().admin('/nv/_index/_design/other/nouveau/genre-only', { method: 'DELETE' });
      assert.deepEqual([res.status, res.body], [200, { ok: true }]);
      assert.equal((await server().admin('/nv/_design/other')).status, 404);
      assert.deepEqual(await findIds(server(), 'nv', { selector: { genre: 'classic' } }), ['emma']);
    });

    test('deleting one of two nouveau indexes of a design document keeps the other, and adds nothing', async () => {
      for (const name of ['one', 'two']) await createIndex(server(), 'nv', { index: { fields: [{ name: 'title', type: 'string' }] }, type: 'nouveau', ddoc: 'pair', name });
      const res = await server().admin('/nv/_index/pair/nouveau/one', { method: 'DELETE' });
      assert.deepEqual([res.status, res.body], [200, { ok: true }]);
      const ddoc = (await server().admin('/nv/_design/pair')).body;
      assert.deepEqual([Object.keys(ddoc.nouveau), ddoc.views], [['two'], undefined]);
      assert.deepEqual(await findIds(server(), 'nv', { selector: { title: 'Ubik' }, use_index: ['pair', 'two'] }), ['ubik']);
    });

    test('in a partitioned database a nouveau index serves partition queries', async () => {
      assert.equal((await server().admin('/nvpart?partitioned=true', { method: 'PUT' })).status, 201);
      const docs = [{ _id: 'x:1', word: 'alpha' }, { _id: 'x:2', word: 'beta' }, { _id: 'y:1', word: 'alpha' }];
      assert.equal((await server().admin('/nvpart/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
      await createIndex(server(), 'nvpart', { index: { fields: [{ name: 'word', type: 'string' }] }, type: 'nouveau', ddoc: 'words', name: 'w' });
      const res = await server().admin('/nvpart/_partition/x/_find', { method: 'POST', body: { selector: { $text: 'alpha' } } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.docs.map((doc: { _id: string }) => doc._id), ['x:1']);
    });

    test('a nouveau query examining more than [mango] max_docs_examined documents is refused, as a json one', async () => {
      assert.equal((await server().admin('/_node/_local/_config/mango/max_docs_examined', { method: 'PUT', body: '"2"' })).status, 200);
      try {
        const res = await find(server(), 'nv', { selector: { genre: 'sf', year: { $mod: [7, 3] } } });
        assert.deepEqual([res.status, res.body.error], [400, 'too_many_docs_examined']);
      } finally {
        await server().admin('/_node/_local/_config/mango/max_docs_examined', { method: 'PUT', body: '"500000"' });
      }
    });
  });
}
