import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encode as encodeKey } from '../../../src/collation/encode.js';
import type { Json } from '../../../src/json/json.js';
import { ASCII_ORDER, COLLATION_TABLE } from '../../support/collation-table.js';

const compareKeys = (a: Json, b: Json): number => Buffer.compare(encodeKey(a), encodeKey(b));

const icu = new Intl.Collator('und');
const typeRank = (value: Json): number =>
  value === null ? 0 : value === false ? 1 : value === true ? 2 : typeof value === 'number' ? 3 : typeof value === 'string' ? 4 : Array.isArray(value) ? 5 : 6;

/** CouchDB's collation written out plainly with ICU itself (Intl.Collator) for strings: the reference. */
function byIcu(a: Json, b: Json): number {
  if (typeRank(a) !== typeRank(b)) return typeRank(a) - typeRank(b);
  if (typeof a === 'number') return a - (b as number);
  if (typeof a === 'string') return icu.compare(a, b as string);
  if (a === null || typeof a === 'boolean') return 0;
  const pairs = (value: Json): Json[] => (Array.isArray(value) ? value : Object.entries(value as object).flat());
  const [ia, ib] = [pairs(a), pairs(b)];
  for (let i = 0; i < Math.min(ia.length, ib.length); i++) {
    const order = byIcu(ia[i]!, ib[i]!);
    if (order !== 0) return order;
  }
  return ia.length - ib.length;
}

describe('collation key encoding', () => {
  test('sorts CouchDB\'s collation table in its order, both ways', () => {
    const shuffled = [...COLLATION_TABLE].reverse();
    assert.deepEqual(shuffled.sort(compareKeys), COLLATION_TABLE);
    for (let i = 1; i < COLLATION_TABLE.length; i++) assert.ok(compareKeys(COLLATION_TABLE[i - 1]!, COLLATION_TABLE[i]!) < 0, `${JSON.stringify(COLLATION_TABLE[i - 1])} < ${JSON.stringify(COLLATION_TABLE[i])}`);
  });

  test('sorts single ASCII characters as CouchDB\'s documentation shows (symbols, digits, then letters lower case first)', () => {
    assert.deepEqual([...ASCII_ORDER].sort(compareKeys), ASCII_ORDER);
    assert.ok(compareKeys(' ', '`') < 0);
  });

  test('numbers compare by value: 1 and 1.0 are one key, -0 is 0', () => {
    assert.equal(compareKeys(1, 1.0), 0);
    assert.equal(compareKeys(-0, 0), 0);
    assert.ok(compareKeys(0.1, 0.2) < 0 && compareKeys(-0.2, -0.1) < 0 && compareKeys(-1e-300, 0) < 0);
  });

  test('strings ICU holds equal encode equal (a zero-width space is ignorable), case differs at the third level only', () => {
    assert.equal(compareKeys('c', 'c\u200B'), 0);
    assert.equal(compareKeys('c', 'c\u200B\u200B'), 0);
    assert.ok(compareKeys('a', 'A') < 0 && compareKeys('A', 'aa') < 0 && compareKeys('a', 'AA') < 0);
    assert.equal(compareKeys('\u00e9', 'e\u0301'), 0, 'precomposed and decomposed é');
    assert.ok(compareKeys('e', '\u00e9') < 0 && compareKeys('\u00e9', 'f') < 0 && compareKeys('\u00e9a', 'eb') < 0);
  });

  test('agrees with ICU (Intl.Collator) on random strings, arrays and objects', () => {
    const alphabet = ['a', 'b', 'A', 'B', 'z', 'Z', '0', '9', ' ', '-', '_', '~', '$', '\u00e9', '\u00c9', '\u00fc', '\u0301', '\u4e2d', '\u0416', '\u0436', '\ud83d\ude00'];
    let seed = 42;
    const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    const text = (): string => Array.from({ length: next(6) }, () => alphabet[next(alphabet.length)]).join('');
    const value = (depth: number): Json => {
      const kind = next(depth > 1 ? 4 : 6);
      if (kind <= 1) return text();
      if (kind === 2) return [null, true, false][next(3)]!;
      if (kind === 3) return next(7) - 3;
      if (kind === 4) return Array.from({ length: next(3) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: next(3) }, () => [text(), value(depth + 1)]));
    };
    for (let i = 0; i < 3000; i++) {
      const a = value(0);
      const b = value(0);
      assert.equal(Math.sign(compareKeys(a, b)), Math.sign(byIcu(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    }
  });

  test('an encoded key is a byte string that never needs the other key to compare', () => {
    assert.ok(Buffer.isBuffer(encodeKey(['x', 1, { y: null }])));
    assert.ok(Buffer.compare(encodeKey([]), encodeKey([null])) < 0);
    assert.ok(Buffer.compare(encodeKey({}), encodeKey({ '': null })) < 0);
  });
});
