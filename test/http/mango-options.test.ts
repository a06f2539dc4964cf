/**
 * `_find` options over HTTP: fields, sort, limit (default 25), skip, bookmark, use_index, r,
 * execution_stats, conflicts, update/stable/stale, warnings, and `_explain`, on every backend.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { createIndex, find, findIds, mangoServer, PEOPLE, seed, SERVER_BACKENDS } from '../support/mango.js';

const NO_INDEX = 'No matching index found, create an index to optimize query time.';
const many = Array.from({ length: 60 }, (_, i) => ({ _id: `n${String(i).padStart(2, '0')}`, n: i, even: i % 2 === 0 }));

for (const backend of SERVER_BACKENDS) {
  describe(`${backend}: _find options`, () => {
    const server = mangoServer(backend);
    before(async () => {
      await seed(server(), 'people', PEOPLE);
      await createIndex(server(), 'people', { index: { fields: ['city', 'age'] }, ddoc: 'city-age', name: 'city-age' });
      await createIndex(server(), 'people', { index: { fields: ['name'] }, ddoc: 'names', name: 'name' });
      await seed(server(), 'many', many);
      await createIndex(server(), 'many', { index: { fields: ['n'] }, ddoc: 'n', name: 'n' });
    });

    test('fields keeps only the named fields, nested ones nested', async () => {
      const res = await find(server(), 'people', { selector: { _id: 'alice' }, fields: ['name', 'address.zip', 'missing'] });
      assert.deepEqual(res.body.docs, [{ name: 'Alice', address: { zip: '75001' } }]);
    });

    test('sort by indexed fields, both directions; a constant leading column may be skipped', async () => {
      assert.deepEqual(await findIds(server(), 'people', { selector: { name: { $gt: null } }, sort: ['name'] }), ['alice', 'bob', 'carol', 'dave', 'erin']);
      assert.deepEqual(await findIds(server(), 'people', { selector: { name: { $gt: null } }, sort: [{ name: 'desc' }] }), ['erin', 'dave', 'carol', 'bob', 'alice']);
      assert.deepEqual(await findIds(server(), 'people', { selector: { city: 'Paris' }, sort: [{ age: 'desc' }] }), ['carol', 'alice']);
      assert.deepEqual(await findIds(server(), 'people', { selector: { city: { $gt: null } }, sort: ['city', 'age'] }), ['bob', 'erin', 'alice', 'carol', 'dave']);
    });

    test('a sort no index serves is 400 no_usable_index; mixed directions 400 unsupported_mixed_sort', async () => {
      const res = await find(server(), 'people', { selector: { age: { $gt: 0 } }, sort: ['score'] });
      assert.deepEqual([res.status, res.body], [400, { error: 'no_usable_index', reason: 'No index exists for this sort, try indexing by the sort fields.' }]);
      const mixed = await find(server(), 'people', { selector: {}, sort: [{ city: 'asc' }, { age: 'desc' }] });
      assert.deepEqual([mixed.status, mixed.body.error], [400, 'unsupported_mixed_sort']);
      const bad = await find(server(), 'people', { selector: {}, sort: [{ city: 'up' }] });
      assert.deepEqual([bad.status, bad.body.error], [400, 'invalid_sort_dir']);
      const notArray = await find(server(), 'people', { selector: {}, sort: 'city' });
      assert.deepEqual([notArray.status, notArray.body.error], [400, 'invalid_sort_json']);
    });

    test('limit defaults to 25; limit and skip page through index order', async () => {
      assert.equal((await findIds(server(), 'many', { selector: { n: { $gte: 0 } } })).length, 25);
      assert.deepEqual(await findIds(server(), 'many', { selector: { n: { $gte: 10 } }, skip: 5, limit: 3 }), ['n15', 'n16', 'n17']);
      assert.deepEqual(await findIds(server(), 'many', { selector: { n: { $gte: 0 } }, limit: 0 }), []);
    });

    test('bookmarks page through every match exactly once, on a json index and on _all_docs', async () => {
      for (const selector of [{ n: { $gte: 0 }, even: true }, { even: true }]) {
        const seen: string[] = [];
        let bookmark: string | undefined;
        for (let page = 0; page < 10; page++) {
          const res = await find(server(), 'many', { selector, limit: 7, ...(bookmark ? { bookmark } : {}) });
          assert.equal(res.status, 200);
          if (res.body.docs.length === 0) break;
          seen.push(...res.body.docs.map((doc: { _id: string }) => doc._id));
          bookmark = res.body.bookmark;
        }
        assert.deepEqual(seen, many.filter((doc) => doc.even).map((doc) => doc._id), JSON.stringify(selector));
      }
      const bad = await find(server(), 'many', { selector: { n: { $gte: 0 } }, bookmark: 'not-a-bookmark' });
      assert.deepEqual([bad.status, bad.body.error], [400, 'invalid_bookmark']);
    });

    test('use_index picks the named index; an unusable one falls back with a warning, or 400 without fallback', async () => {
      const named = await server().admin('/people/_explain', { method: 'POST', body: { selector: { city: 'Paris', name: { $gt: null } }, use_index: ['_design/names', 'name'] } });
      assert.equal(named.body.index.name, 'name');
      const fallback = await find(server(), 'people', { selector: { age: 25 }, use_index: 'names' });
      assert.equal(fallback.status, 200);
      assert.match(fallback.body.warning, /^_design\/names was not used because it does not contain a valid index for this query\./);
      assert.deepEqual(fallback.body.docs.map((doc: { _id: string }) => doc._id), ['bob', 'dave']);
      const strict = await find(server(), 'people', { selector: { age: 25 }, use_index: ['names', 'name'], allow_fallback: false });
      assert.deepEqual([strict.status, strict.body], [400, { error: 'invalid_index', reason: '_design/names, name specified by `use_index` could not be found or it is not suitable.' }]);
    });

    test('without a usable index the answer carries CouchDB warning; with one it does not', async () => {
      assert.equal((await find(server(), 'people', { selector: { score: 9 } })).body.warning, NO_INDEX);
      assert.equal((await find(server(), 'people', { selector: { name: 'Dave' } })).body.warning, undefined);
    });

    test('execution_stats counts only the rows of the index range', async () => {
      const res = await find(server(), 'many', { selector: { n: { $gte: 10, $lt: 15 } }, execution_stats: true, r: 2 });
      const stats = res.body.execution_stats;
      assert.deepEqual([stats.total_keys_examined, stats.total_docs_examined, stats.results_returned, stats.total_quorum_docs_examined], [5, 5, 5, 0]);
      assert.equal(typeof stats.execution_time_ms, 'number');
      const scan = await find(server(), 'many', { selector: { even: 'no' }, execution_stats: true });
      assert.equal(scan.body.execution_stats.total_docs_examined, 61, 'every document and the design document');
      assert.match(scan.body.warning, /^No matching index found.*\nThe number of documents examined is high/s);
    });

    test('conflicts: true adds _conflicts to conflicted documents', async () => {
      const bob = await server().admin('/people/bob');
      await server().admin('/people/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [{ ...bob.body, _rev: '1-ffffffffffffffffffffffffffffffff', name: 'Bobby' }] } });
      const res = await find(server(), 'people', { selector: { city: 'Berlin' }, conflicts: true });
      assert.equal(res.body.docs.length, 1);
      assert.equal(res.body.docs[0]._conflicts.length, 1);
      assert.equal((await find(server(), 'people', { selector: { city: 'Berlin' } })).body.docs[0]._conflicts, undefined);
    });

    test('update: false (and stale: ok) read the index as it is; the next query catches up', async () => {
      await seed(server(), 'lazy', [{ _id: 'a', v: 1 }]);
      await createIndex(server(), 'lazy', { index: { fields: ['v'] }, ddoc: 'v' });
      assert.deepEqual(await findIds(server(), 'lazy', { selector: { v: { $gt: 0 } } }), ['a']);
      await server().admin('/lazy/b', { method: 'PUT', body: { v: 2 } });
      assert.deepEqual(await findIds(server(), 'lazy', { selector: { v: { $gt: 0 } }, update: false }), ['a']);
      assert.deepEqual(await findIds(server(), 'lazy', { selector: { v: { $gt: 0 } }, stale: 'ok' }), ['a']);
      assert.deepEqual(await findIds(server(), 'lazy', { selector: { v: { $gt: 0 } }, stable: true }), ['a', 'b']);
    });

    test('values longer than a stored key are indexed, found and ordered by their first bytes', async () => {
      const long = 'x'.repeat(3000);
      await seed(server(), 'long', [{ _id: 'b', v: `${long}b` }, { _id: 'a', v: `${long}a` }, { _id: 'short', v: 'x' }]);
      await createIndex(server(), 'long', { index: { fields: ['v'] }, ddoc: 'v' });
      assert.deepEqual(await findIds(server(), 'long', { selector: { v: `${long}b` } }), ['b']);
      assert.deepEqual(await findIds(server(), 'long', { selector: { v: { $gt: `${long}a` } } }), ['b']);
      assert.deepEqual(await findIds(server(), 'long', { selector: { v: { $gte: 'x' } }, sort: ['v'] }), ['short', 'a', 'b']);
    });

    test('option types are checked as CouchDB checks them', async () => {
      const cases: [object, string][] = [
        [{}, 'missing_required_key'],
        [{ selector: 'x' }, 'invalid_selector_json'],
        [{ selector: {}, nope: 1 }, 'invalid_key'],
        [{ selector: {}, limit: -1 }, 'invalid_non_neg_integer'],
        [{ selector: {}, skip: 'x' }, 'invalid_non_neg_integer'],
        [{ selector: {}, r: 0 }, 'invalid_pos_integer'],
        [{ selector: {}, conflicts: 'yes' }, 'invalid_boolean'],
        [{ selector: {}, fields: 'name' }, 'invalid_fields'],
        [{ selector: {}, stale: 'later' }, 'invalid_value'],
      ];
      for (const [body, error] of cases) {
        const res = await find(server(), 'people', body);
        assert.deepEqual([res.status, res.body.error], [400, error], JSON.stringify(body));
      }
      const get = await server().admin('/people/_find');
      assert.deepEqual([get.status, get.body.error], [405, 'method_not_allowed']);
    });

    test('_explain names the index, the normalised selector, the options and the key range', async () => {
      const res = await server().admin('/people/_explain', { method: 'POST', body: { selector: { city: 'Paris', age: { $gt: 30 } }, limit: 2 } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.index, { ddoc: '_design/city-age', name: 'city-age', type: 'json', partitioned: false, def: { fields: [{ city: 'asc' }, { age: 'asc' }] } });
      assert.deepEqual(res.body.selector, { $and: [{ city: { $eq: 'Paris' } }, { age: { $gt: 30 } }] });
      assert.deepEqual([res.body.dbname, res.body.limit, res.body.skip, res.body.fields], ['people', 2, 0, []]);
      assert.deepEqual([res.body.mrargs.start_key, res.body.mrargs.end_key], [['Paris', 30], ['Paris', '<MAX>']]);
      assert.equal(res.body.opts.bookmark, 'nil');
    });
  });
}
