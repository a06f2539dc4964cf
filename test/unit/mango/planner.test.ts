import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFindRequest } from '../../../src/mango/find-request.js';
import { signatureOf, type MangoIndex } from '../../../src/mango/index-definitions.js';
import { plan } from '../../../src/mango/planner.js';
import type { SortField } from '../../../src/mango/sort.js';

function index(ddoc: string, fields: string[], partialFilter?: object): MangoIndex {
  const columns: SortField[] = fields.map((field) => ({ field, direction: 'asc' }));
  return { ddoc: `_design/${ddoc}`, name: ddoc, type: 'json', fields: columns, partialFilter: partialFilter as never, signature: signatureOf(columns, partialFilter as never) };
}

const INDEXES = [index('a', ['a']), index('ab', ['a', 'b']), index('b', ['b']), index('partial', ['c'], { kind: 'x' })];
const chosen = (body: object): string => {
  const ddoc = plan(INDEXES, parseFindRequest(body as never)).index.ddoc;
  return ddoc === null ? '_all_docs' : ddoc.slice('_design/'.length);
};

test('the planner picks indexes as CouchDB does', () => {
  const cases: [object, string][] = [
    [{ selector: { a: 1 } }, 'a'],
    [{ selector: { a: 1, b: { $gt: 2 } } }, 'ab'],
    [{ selector: { b: 1 } }, 'b'],
    [{ selector: { c: 1 } }, '_all_docs'],
    [{ selector: { c: 1 }, use_index: 'partial' }, 'partial'],
    [{ selector: { a: { $exists: false } } }, '_all_docs'],
    [{ selector: { a: { $exists: true } } }, 'a'],
    [{ selector: { b: { $beginsWith: 'x' } } }, 'b'],
    [{ selector: { a: 1 }, sort: ['b'] }, 'ab'],
    // A json index every branch requires is usable, and a usable json index goes before _all_docs.
    [{ selector: { $or: [{ a: 1 }, { a: 2 }] } }, 'a'],
    [{ selector: { a: { $in: [1, 2] }, z: { $gt: 2 } } }, 'a'],
    [{ selector: { a: { $in: [1, 2] }, b: { $gt: 2 } } }, 'b'],
    [{ selector: { b: { $in: [1, 2] }, a: { $regex: 'x' } } }, 'a'],
    [{ selector: { $or: [{ a: 1 }, { b: 2 }] } }, '_all_docs'],
    [{ selector: { _id: { $gt: 'x' } }, sort: ['_id'] }, '_all_docs'],
  ];
  for (const [body, expected] of cases) assert.equal(chosen(body), expected, JSON.stringify(body));
});

test('a sort nothing serves is no_usable_index; a constant leading column may be skipped', () => {
  assert.throws(() => chosen({ selector: { a: { $gt: 0 } }, sort: ['z'] }), { error: 'no_usable_index' });
  assert.equal(chosen({ selector: { a: { $gt: 0 } }, sort: ['b'] }), 'b', 'a sort field need not be in the selector');
  assert.equal(chosen({ selector: { a: 5, b: { $gt: 0 } }, sort: ['b'] }), 'ab');
  assert.throws(() => chosen({ selector: {}, sort: ['_id'] }), { error: 'no_usable_index' });
});

test('key ranges: equal leading columns then one range; empty ranges read nothing', () => {
  const keys = (body: object) => plan(INDEXES, parseFindRequest(body as never)).keys;
  assert.deepEqual([keys({ selector: { a: 1, b: { $gte: 2, $lt: 9 } } }).startKey, keys({ selector: { a: 1, b: { $gte: 2, $lt: 9 } } }).endKey], [[1, 2], [1, 9]]);
  assert.deepEqual(keys({ selector: { a: { $gt: 3 } } }).endKey, ['<MAX>']);
  assert.equal(keys({ selector: { a: { $gt: 3, $lt: 1 } } }).empty, true);
  assert.equal(keys({ selector: { a: { $gte: 3, $lte: 3 } } }).empty, false);
});
