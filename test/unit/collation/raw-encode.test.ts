// CouchDB's raw collation (views with options.collation = "raw"): Erlang's term order, and its byte encoding.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { compareRaw } from '../../../src/collation/raw-compare.js';
import { encodeRaw } from '../../../src/collation/raw-encode.js';
import { encode } from '../../../src/collation/encode.js';
import { isArrayKey, valueEnd } from '../../../src/collation/key-layout.js';
import type { Json } from '../../../src/json/json.js';

/** Strings where byte order is subtle: NUL and 0x01 (escaped), prefixes, code points past the BMP against U+E000–U+FFFF. */
const TRICKY = ['a', 'A', 'b', '\u0000', '\u0001', '\u0002', '\u00ff', '\u00e9', '\ue000', '\uffff', '\u{1F600}', '\u{10FFFF}', 'z'];

const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 4 }),
  fc.string({ unit: 'binary', maxLength: 5 }),
  fc.array(fc.constantFrom(...TRICKY), { maxLength: 4 }).map((chars) => chars.join('')),
);
const number = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -5, max: 5 }), fc.constantFrom(0, -0, 1e300, -Number.MIN_VALUE));
const json = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Json>(null, true, false),
    number,
    text,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', '\u0000', 'ab', ''), tie('value'), { maxKeys: 3 }),
  ),
})).value;

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);
const show = (...values: Json[]): string => values.map((value) => JSON.stringify(value)).join(' vs ');

describe('raw collation: compareRaw and encodeRaw', () => {
  test('encoded keys compare (memcmp) as compareRaw orders the values', () => {
    fc.assert(
      fc.property(json, json, (a, b) => assert.equal(sign(Buffer.compare(encodeRaw(a), encodeRaw(b))), sign(compareRaw(a, b)), show(a, b))),
      { numRuns: 10_000 },
    );
  });

  test('values encoded one after the other compare value by value (every encoding is self-delimiting)', () => {
    fc.assert(
      fc.property(json, json, json, json, (a, b, c, d) => {
        const joined = Buffer.compare(Buffer.concat([encodeRaw(a), encodeRaw(b)]), Buffer.concat([encodeRaw(c), encodeRaw(d)]));
        assert.equal(sign(joined), sign(compareRaw(a, c) || compareRaw(b, d)), show(a, b, c, d));
      }),
      { numRuns: 3_000 },
    );
  });

  test('the order of CouchDB\'s documentation: 1 < false < null < true < {"a":"a"} < ["a"] < "a"', () => {
    const ordered: Json[] = [-1, 1, 2.5, false, null, true, {}, { a: 'a' }, { a: 'a', b: 1 }, { b: 0 }, [], ['a'], ['a', 1], ['b'], '', 'A', 'B', 'a', 'a\u0000', 'aa', 'b', '\u00e9', '\uffff', '\u{1F600}'];
    for (let i = 0; i + 1 < ordered.length; i++) {
      assert.equal(compareRaw(ordered[i]!, ordered[i + 1]!), -1, show(ordered[i]!, ordered[i + 1]!));
      assert.ok(Buffer.compare(encodeRaw(ordered[i]!), encodeRaw(ordered[i + 1]!)) < 0, show(ordered[i]!, ordered[i + 1]!));
    }
    // ICU holds these apart differently: "a" < "B" there, and U+E000 > U+1F600 in JavaScript's UTF-16 order.
    assert.ok(Buffer.compare(encode('a'), encode('B')) < 0);
    assert.equal(compareRaw('\ue000', '\u{1F600}'), -1);
  });

  test('the shared key layout walks raw keys: array members and their ends', () => {
    fc.assert(
      fc.property(fc.array(json, { maxLength: 4 }), (members) => {
        const key = encodeRaw(members);
        assert.ok(isArrayKey(key));
        let at = 1;
        for (const member of members) {
          const end = valueEnd(key, at);
          assert.deepEqual(key.subarray(at, end), encodeRaw(member), show(member));
          at = end;
        }
        assert.equal(at, key.length - 1);
      }),
      { numRuns: 2_000 },
    );
    assert.equal(isArrayKey(encodeRaw('x')), false);
    assert.equal(isArrayKey(encode(['x'])), true);
  });
});
