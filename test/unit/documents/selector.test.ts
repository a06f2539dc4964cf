import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compare } from '../../../src/collation/compare.js';
import { matchesSelector, parseSelector } from '../../../src/documents/selector.js';
import { CouchError } from '../../../src/errors/couch-error.js';
import type { JsonObject } from '../../../src/storage/storage.js';

const DOC: JsonObject = {
  _id: 'note-1',
  _rev: '1-abc',
  type: 'note',
  year: 2024,
  tags: ['a', 'b'],
  owner: { name: 'ann', 'first.last': 'x' },
  items: [{ n: 1 }, { n: 5 }],
  empty: null,
};

describe('Mango selectors (_selector filter)', () => {
  const cases: [string, JsonObject, boolean][] = [
    ['implicit equality', { type: 'note' }, true],
    ['implicit equality, other value', { type: 'task' }, false],
    ['several fields are an implicit $and', { type: 'note', year: 2023 }, false],
    ['$gt/$lte on numbers', { year: { $gt: 2020, $lte: 2024 } }, true],
    ['$lt rejects', { year: { $lt: 2024 } }, false],
    ['collation: a string sorts after any number', { type: { $gt: 99999 } }, true],
    ['$ne on a missing field matches', { nothing: { $ne: 1 } }, true],
    ['$exists false', { nothing: { $exists: false } }, true],
    ['$exists true on null value', { empty: { $exists: true } }, true],
    ['$in', { type: { $in: ['task', 'note'] } }, true],
    ['$in on an array field matches an element', { tags: { $in: ['b'] } }, true],
    ['$nin', { type: { $nin: ['note'] } }, false],
    ['$all', { tags: { $all: ['b', 'a'] } }, true],
    ['$size', { tags: { $size: 3 } }, false],
    ['$type', { owner: { $type: 'object' } }, true],
    ['$regex', { _id: { $regex: '^note-' } }, true],
    ['$beginsWith', { _id: { $beginsWith: 'task' } }, false],
    ['$mod', { year: { $mod: [4, 0] } }, true],
    ['dotted path', { 'owner.name': 'ann' }, true],
    ['nested object selector', { owner: { name: 'ann' } }, true],
    ['escaped dot', { 'owner.first\\.last': 'x' }, true],
    ['$elemMatch', { items: { $elemMatch: { n: { $gt: 4 } } } }, true],
    ['$allMatch', { items: { $allMatch: { n: { $gt: 4 } } } }, false],
    ['$or', { $or: [{ type: 'task' }, { year: 2024 }] }, true],
    ['$nor', { $nor: [{ type: 'task' }, { year: 2024 }] }, false],
    ['$not', { year: { $not: { $eq: 2024 } } }, false],
    ['$and', { $and: [{ type: 'note' }, { tags: { $size: 2 } }] }, true],
    ['equality of whole arrays', { tags: ['a', 'b'] }, true],
    ['$eq with an object compares deeply', { owner: { $eq: { name: 'ann', 'first.last': 'x' } } }, true],
  ];
  for (const [title, selector, expected] of cases) {
    it(`${title}: ${JSON.stringify(selector)} → ${expected}`, () => {
      assert.equal(matchesSelector(parseSelector(selector), DOC), expected);
    });
  }

  for (const bad of [[], 'x', { year: { $bogus: 1 } }, { $or: {} }, { tags: { $size: -1 } }, { _id: { $regex: '(' } }, { x: { $in: 3 } }]) {
    it(`refuses ${JSON.stringify(bad)} with 400`, () => {
      assert.throws(() => parseSelector(bad), (error: unknown) => error instanceof CouchError && error.status === 400);
    });
  }

  it('compares JSON in CouchDB collation order', () => {
    const ordered = [null, false, true, -1, 2, 'a', 'A', 'b', ['a'], ['a', 1], { a: 1 }];
    for (let i = 0; i + 1 < ordered.length; i++) assert.ok(compare(ordered[i]!, ordered[i + 1]!) < 0, `${JSON.stringify(ordered[i])} < ${JSON.stringify(ordered[i + 1])}`);
  });

  it('$text is believed, as CouchDB\'s $default is (the text index chose the document); only a scalar argument is accepted', () => {
    assert.equal(matchesSelector(parseSelector({ $text: 'anything', a: 1 }), { _id: 'x', a: 1 }), true);
    assert.equal(matchesSelector(parseSelector({ $text: 'anything', a: 1 }), { _id: 'x', a: 2 }), false);
    assert.throws(() => parseSelector({ $text: { a: 1 } }), /Bad argument for operator \$text/);
  });
});
