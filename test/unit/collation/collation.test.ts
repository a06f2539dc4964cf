import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { compare } from '../../../src/collation/compare.js';
import { encode, encodeAll } from '../../../src/collation/encode.js';
import type { Json } from '../../../src/json/json.js';

/** Characters where collation is subtle: case, accents (precomposed and combining), ignorables, CJK, emoji. */
const TRICKY = ['a', 'A', 'b', 'B', 'e', '\u00e9', 'e\u0301', '\u0301', '\u200b', '\u0000', ' ', '-', '_', '0', '9', '\u00df', '\u00e6', '\u4e2d', '\uff21', '\uffff', '\u{1F600}', '\u{1F601}', '\u{20000}', '\u{10FFFF}'];

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.string({ unit: 'binary-ascii', maxLength: 6 }),
  fc.string({ unit: fc.constantFrom('a', 'A', 'b', '-', ' ', '\u0000', '\u0001', '_', '0'), maxLength: 5 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
  fc.array(fc.constantFrom(...TRICKY), { maxLength: 4 }).map((chars) => chars.join('')),
);

const number = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(0, -0, 1, 1.0, -1, 0.5, -0.5, 1e300, -1e300, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, -Number.MIN_VALUE, 2 ** 53, -(2 ** 53)),
);

const json = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Json>(null, true, false),
    number,
    text,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(text, tie('value'), { maxKeys: 3 }),
  ),
})).value;

/** `value` with `char` appended to its first string (its last member's name or value, for an object). */
function withCharAppended(value: Json, char: string): Json {
  if (typeof value === 'string') return value + char;
  if (Array.isArray(value)) return value.length === 0 ? [char] : [withCharAppended(value[0]!, char), ...value.slice(1)];
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return { [char]: null };
    const [name, member] = entries[entries.length - 1]!;
    return Object.fromEntries([...entries.slice(0, -1), typeof member === 'string' ? [name, member + char] : [name + char, member]]);
  }
  return [value, char];
}

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);
const show = (...values: Json[]): string => values.map((value) => JSON.stringify(value)).join(' vs ');

describe('one collation: compare and encode', () => {
  test('encoded keys compare (memcmp) as compare orders the values', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        assert.equal(sign(Buffer.compare(encode(a), encode(b))), sign(compare(a, b)), show(a, b));
      }),
      { numRuns: 10_000 },
    );
  });

  test('values that differ only in ways the order sees: each value against a near copy of itself', () => {
    const nearCopies = fc.tuple(json, fc.constantFrom(...TRICKY)).map(([value, char]): [Json, Json] => [value, withCharAppended(value, char)]);
    fc.assert(
      fc.property(nearCopies, ([a, b]) => {
        assert.equal(sign(Buffer.compare(encode(a), encode(b))), sign(compare(a, b)), show(a, b));
      }),
      { numRuns: 5_000 },
    );
  });

  test('compare is antisymmetric and a value equals itself', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        assert.equal(compare(a, a), 0, show(a));
        assert.equal(compare(a, b), -compare(b, a) || 0, show(a, b));
      }),
      { numRuns: 10_000 },
    );
  });

  test('compare is transitive: three values sorted by it are in order pair by pair', () => {
    fc.assert(
      fc.property(json, json, json, (a, b, c) => {
        const [x, y, z] = [a, b, c].sort(compare) as [Json, Json, Json];
        assert.ok(compare(x, y) <= 0 && compare(y, z) <= 0 && compare(x, z) <= 0, show(x, y, z));
        if (compare(x, y) === 0 && compare(y, z) === 0) assert.equal(compare(x, z), 0, show(x, y, z));
        if (compare(x, y) < 0 || compare(y, z) < 0) assert.equal(compare(x, z), -1, show(x, y, z));
      }),
      { numRuns: 10_000 },
    );
  });

  test('a sequence of values encoded one after the other compares value by value (compound index keys)', () => {
    fc.assert(
      fc.property(json, json, json, json, (a, b, c, d) => {
        assert.equal(sign(Buffer.compare(encodeAll([a, b]), encodeAll([c, d]))), compare(a, c) || compare(b, d), show(a, b, c, d));
        assert.ok(Buffer.compare(encodeAll([a]), encodeAll([a, b])) < 0, 'a prefix first');
      }),
      { numRuns: 5_000 },
    );
  });

  test('types in CouchDB\'s order, numbers by value, strings as ICU: the case of issue 40', () => {
    const ordered: Json[] = [null, false, true, -Number.MAX_VALUE, -1, -0.5, 0, 0.5, 1, 1e300, '', 'a', 'A', 'b', '\uffff', [], [null], ['a'], {}, { a: null }];
    for (let i = 1; i < ordered.length; i++) assert.equal(compare(ordered[i - 1]!, ordered[i]!), -1, show(ordered[i - 1]!, ordered[i]!));
    assert.equal(compare(-0, 0), 0);
    assert.equal(compare('c', 'c\u200b'), 0, 'ICU ignores a zero-width space');
    assert.equal(compare('\u00e9', 'e\u0301'), 0, 'precomposed and decomposed é');
    assert.equal(compare('\u{1F600}', '\uFF21'), -1, 'an emoji (a symbol) before a letter, though its code point is above');
  });
});
