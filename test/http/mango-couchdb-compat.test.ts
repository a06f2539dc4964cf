/**
 * `_find` answering as CouchDB 3.5 answers where PouchDB's own find suite (run against CouchDB in
 * its CI) found Divan answering otherwise, on every storage backend.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { createIndex, find, findIds, mangoServer, PEOPLE, seed, SERVER_BACKENDS } from '../support/mango.js';

const EVERYONE = ['alice', 'bob', 'carol', 'dave', 'erin'];

for (const backend of SERVER_BACKENDS) {
  describe(`${backend}: _find as CouchDB answers it`, () => {
    const server = mangoServer(backend);
    before(async () => {
      await seed(server(), 'people', [...PEOPLE, { _id: 'frank', $foobar: 'a' }]);
      await createIndex(server(), 'people', { index: { fields: ['city'] }, ddoc: 'by-city', name: 'city' });
    });

    test('design documents are never results of a full scan', async () => {
      assert.deepEqual(await findIds(server(), 'people', { selector: {} }), [...EVERYONE, 'frank']);
      assert.deepEqual(await findIds(server(), 'people', { selector: { _id: { $gt: null } } }), [...EVERYONE, 'frank']);
      assert.deepEqual(await findIds(server(), 'people', { selector: { _id: { $gt: '_' } }, limit: 1 }), ['alice']);
    });

    test('$nin looks inside array values; a missing field does not match', async () => {
      assert.deepEqual(await findIds(server(), 'people', { selector: { tags: { $nin: ['a'] } } }), ['bob', 'carol']);
      assert.deepEqual(await findIds(server(), 'people', { selector: { tags: { $nin: ['c', 'x'] } } }), ['alice', 'bob', 'carol']);
      assert.deepEqual(await findIds(server(), 'people', { selector: { _id: { $nin: ['alice', 'bob'] }, age: { $exists: true } } }), ['carol', 'dave', 'erin']);
    });

    test('a usable json index serves the query before _all_docs, even with no range on its columns', async () => {
      const selector = { city: { $in: ['Paris', 'Rome'] }, age: { $gt: 30 } };
      const explained = await server().admin('/people/_explain', { method: 'POST', body: { selector } });
      assert.equal(explained.status, 200);
      assert.equal(explained.body.index.name, 'city');
      const res = await find(server(), 'people', { selector });
      assert.equal(res.body.warning, undefined);
      assert.deepEqual(res.body.docs.map((doc: { _id: string }) => doc._id).sort(), ['alice', 'carol']);
    });

    test('_id compares in Erlang term order: strings sort after objects and arrays', async () => {
      const ids = [...EVERYONE, 'frank'];
      for (const sort of [[], [{ _id: 'desc' }]]) {
        const cases: [object, string[]][] = [
          [{ $lt: {} }, []],
          [{ $lte: {} }, []],
          [{ $lte: [] }, []],
          [{ $gt: {} }, ids],
          [{ $gte: [] }, ids],
          [{ $gt: null }, ids],
          [{ $lt: false }, []],
        ];
        for (const [condition, expected] of cases) {
          const found = await findIds(server(), 'people', { selector: { _id: condition }, sort });
          assert.deepEqual(found.sort(), expected, `${JSON.stringify(condition)} sorted ${JSON.stringify(sort)}`);
        }
      }
    });

    test('a backslash escapes an initial dollar sign in a field name', async () => {
      assert.deepEqual(await findIds(server(), 'people', { selector: { '\\$foobar': 'a' } }), ['frank']);
      const projected = await find(server(), 'people', { selector: { '\\$foobar': 'a' }, fields: ['_id', '\\$foobar'] });
      assert.deepEqual(projected.body.docs, [{ _id: 'frank', $foobar: 'a' }]);
    });

    test('a partial filter selector is stored in normal form', async () => {
      await createIndex(server(), 'people', { index: { fields: ['name'], partial_filter_selector: { city: 'Paris', age: { $gt: 30 } } }, ddoc: 'partial', name: 'paris' });
      const ddoc = await server().admin('/people/_design/partial');
      const normal = { $and: [{ city: { $eq: 'Paris' } }, { age: { $gt: 30 } }] };
      assert.deepEqual(ddoc.body.views.paris.map.partial_filter_selector, normal);
      const listed = await server().admin('/people/_index');
      const index = listed.body.indexes.find((entry: { name: string }) => entry.name === 'paris');
      assert.deepEqual(index.def.partial_filter_selector, normal);
      const res = await find(server(), 'people', { selector: { name: { $gt: null } }, use_index: ['partial', 'paris'] });
      assert.deepEqual(res.body.docs.map((doc: { _id: string }) => doc._id), ['alice', 'carol']);
      const single = await createIndex(server(), 'people', { index: { fields: ['name'], partial_filter_selector: { city: 'Rome' } }, ddoc: 'partial', name: 'rome' });
      assert.equal(single.result, 'created');
      assert.deepEqual((await server().admin('/people/_design/partial')).body.views.rome.map.partial_filter_selector, { city: { $eq: 'Rome' } });
    });
  });
}
