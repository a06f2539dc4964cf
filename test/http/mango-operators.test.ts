/**
 * `_find`'s selector language over HTTP, operator by operator, with the full-scan (`_all_docs`)
 * index and again through a json index, on every storage backend.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { createIndex, find, findIds, mangoServer, PEOPLE, seed, SERVER_BACKENDS } from '../support/mango.js';

const CASES: [string, object, string[]][] = [
  ['implicit $eq', { city: 'Paris' }, ['alice', 'carol']],
  ['$eq', { age: { $eq: 25 } }, ['bob', 'dave']],
  ['$ne (missing fields match)', { city: { $ne: 'Paris' } }, ['bob', 'dave', 'erin']],
  ['$gt across types (strings after numbers)', { age: { $gt: 30 } }, ['alice', 'carol', 'erin']],
  ['$gte', { age: { $gte: 31 } }, ['alice', 'carol', 'erin']],
  ['$lt', { age: { $lt: 31 } }, ['bob', 'dave']],
  ['$lte', { age: { $lte: 31 } }, ['alice', 'bob', 'dave']],
  ['$gt and $lt on one field', { age: { $gt: 24, $lt: 31 } }, ['bob', 'dave']],
  ['$exists true', { favs: { $exists: true } }, ['alice', 'dave']],
  ['$exists false', { favs: { $exists: false } }, ['bob', 'carol', 'erin']],
  ['$type string', { age: { $type: 'string' } }, ['erin']],
  ['$type null', { score: { $type: 'null' } }, ['carol']],
  ['$in', { city: { $in: ['Rome', 'Oslo'] } }, ['dave', 'erin']],
  ['$in on an array field', { tags: { $in: ['c'] } }, ['dave']],
  ['$nin', { city: { $nin: ['Paris', 'Berlin'] } }, ['dave', 'erin']],
  ['$size', { tags: { $size: 1 } }, ['bob']],
  ['$size 0', { tags: { $size: 0 } }, ['carol']],
  ['$mod', { score: { $mod: [3, 1] } }, ['alice', 'bob']],
  ['$regex', { name: { $regex: '^[A-C]' } }, ['alice', 'bob', 'carol']],
  ['$regex with a flag', { name: { $regex: '(?i)^E' } }, ['erin']],
  ['$beginsWith', { name: { $beginsWith: 'Da' } }, ['dave']],
  ['$all', { tags: { $all: ['a', 'b'] } }, ['alice', 'dave']],
  ['$elemMatch', { tags: { $elemMatch: { $eq: 'c' } } }, ['dave']],
  ['$allMatch (an empty array does not match)', { tags: { $allMatch: { $in: ['a', 'b'] } } }, ['alice', 'bob']],
  ['$keyMapMatch', { favs: { $keyMapMatch: { $eq: 'colour' } } }, ['dave']],
  ['$and', { $and: [{ city: 'Paris' }, { age: { $gt: 35 } }] }, ['carol']],
  ['$or', { $or: [{ city: 'Rome' }, { age: 31 }] }, ['alice', 'dave']],
  ['$nor', { $nor: [{ city: 'Paris' }, { city: 'Berlin' }] }, ['dave', 'erin']],
  ['$not on a field', { age: { $not: { $eq: 25 } } }, ['alice', 'carol', 'erin']],
  ['$not at the top', { $not: { city: 'Paris' } }, ['bob', 'dave', 'erin']],
  ['implicit $and of two fields', { city: 'Paris', manager: true }, ['alice']],
  ['a dotted field', { 'address.zip': '10115' }, ['bob']],
  ['a nested object', { address: { zip: '75001' } }, ['alice']],
  ['an escaped dot', { 'dot\\.key': 'x' }, ['alice']],
  ['an escaped dot below a field', { 'nested.a\\.b': 1 }, ['erin']],
  ['an empty selector matches every document', {}, ['alice', 'bob', 'carol', 'dave', 'erin']],
];

for (const backend of SERVER_BACKENDS) {
  describe(`${backend}: _find operators`, () => {
    const server = mangoServer(backend);
    before(async () => {
      await seed(server(), 'ops', PEOPLE);
      await seed(server(), 'indexed', PEOPLE);
      await createIndex(server(), 'indexed', { index: { fields: ['age'] }, ddoc: 'by-age', name: 'age' });
    });

    for (const [name, selector, expected] of CASES) {
      test(`${name}: ${JSON.stringify(selector)}`, async () => {
        assert.deepEqual(await findIds(server(), 'ops', { selector }), expected);
      });
    }

    test('a json index gives the same documents for range conditions, in key order', async () => {
      const ranged: [object, string[]][] = [
        [{ age: { $gt: 30 } }, ['alice', 'carol', 'erin']],
        [{ age: { $gte: 25, $lt: 42 } }, ['bob', 'dave', 'alice']],
        [{ age: { $lte: 31 } }, ['bob', 'dave', 'alice']],
        [{ age: 25 }, ['bob', 'dave']],
        [{ age: { $gt: 42, $lt: 10 } }, []],
        [{ age: { $gt: null }, city: 'Paris' }, ['alice', 'carol']],
        [{ age: { $exists: true }, name: { $regex: '^[a-z]' } }, ['erin']],
      ];
      for (const [selector, expected] of ranged) {
        const res = await find(server(), 'indexed', { selector, use_index: 'by-age' });
        assert.equal(res.status, 200);
        assert.equal(res.body.warning, undefined, JSON.stringify(selector));
        assert.deepEqual(res.body.docs.map((doc: { _id: string }) => doc._id), expected, JSON.stringify(selector));
      }
    });

    test('an unknown operator is 400 invalid_operator; a bad argument 400 bad_arg', async () => {
      const unknown = await find(server(), 'ops', { selector: { age: { $foo: 1 } } });
      assert.deepEqual([unknown.status, unknown.body], [400, { error: 'invalid_operator', reason: 'Invalid operator: $foo' }]);
      for (const selector of [{ age: { $in: 5 } }, { age: { $size: 'x' } }, { name: { $regex: '(a)\\1' } }, { $or: 'x' }]) {
        const res = await find(server(), 'ops', { selector });
        assert.equal(res.status, 400, JSON.stringify(selector));
        assert.equal(res.body.error, 'bad_arg', JSON.stringify(selector));
        assert.match(res.body.reason, /^Bad argument for operator \$\w+: /);
      }
    });
  });
}
