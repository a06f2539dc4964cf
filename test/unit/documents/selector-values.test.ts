// `$in`, `$nin` and `$all` through hash sets (security issue 32 item 3): the sets must agree with
// `equal`, the pairwise comparison they replace, on every pair of values.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { equal } from '../../../src/documents/selector-collation.js';
import { matchesSelector, parseSelector } from '../../../src/documents/selector.js';
import { ValueSet, valueKey } from '../../../src/documents/selector-values.js';
import type { Json } from '../../../src/json/json.js';

const json = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;
/** Small values, so that equal pairs come up often. */
const small = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom<Json>(null, true, false, 0, -0, 1, 1.0, 2, 'a', 'b', ''),
    fc.array(tie('value'), { maxLength: 2 }),
    fc.dictionary(fc.constantFrom('a', 'b'), tie('value'), { maxKeys: 2 }),
  ),
})).value;

describe('issue 32 item 3: $in/$nin/$all value sets', () => {
  test('issue 32 item 3: two values share a set key exactly when equal() holds', () => {
    fc.assert(fc.property(small, small, (a, b) => (valueKey(a) === valueKey(b)) === equal(a, b)), { numRuns: 5000 });
    fc.assert(fc.property(json, json, (a, b) => (valueKey(a) === valueKey(b)) === equal(a, b)));
  });

  test('issue 32 item 3: 1 and 1.0 are one value, -0 is 0, top-level objects match in any member order', () => {
    assert.ok(new ValueSet([JSON.parse('1.0') as number]).has(1));
    assert.ok(new ValueSet([0]).has(-0));
    assert.ok(new ValueSet([{ a: 1, b: [1, 2] }]).has({ b: [1, 2], a: 1 }));
    assert.ok(!new ValueSet([[1, 2]]).has([2, 1]));
    assert.ok(!new ValueSet(['1']).has(1));
  });

  test('issue 32 item 3: $in, $nin and $all match as before through the sets', () => {
    const doc = { _id: 'x', n: 1, tags: ['a', { k: 1, j: 2 }], obj: { p: 1, q: 2 } };
    const cases: [object, boolean][] = [
      [{ n: { $in: [3, 1.0] } }, true],
      [{ n: { $nin: [3, 1.0] } }, false],
      [{ tags: { $in: ['z', { j: 2, k: 1 }] } }, true],
      [{ tags: { $all: ['a', { k: 1, j: 2 }] } }, true],
      [{ tags: { $all: ['a', 'b'] } }, false],
      [{ tags: { $all: [] } }, true],
      [{ obj: { $in: [{ q: 2, p: 1 }] } }, true],
      [{ missing: { $nin: [1] } }, false],
      [{ $or: [{ n: { $in: Array.from({ length: 5000 }, (_, i) => i + 2) } }, { tags: { $elemMatch: { $in: ['a'] } } }] }, true],
    ];
    for (const [selector, expected] of cases) assert.equal(matchesSelector(parseSelector(selector), doc), expected, JSON.stringify(selector));
  });
});
