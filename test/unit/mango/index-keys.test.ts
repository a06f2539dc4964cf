import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { compare } from '../../../src/collation/compare.js';
import type { Json } from '../../../src/json/json.js';
import { signatureOf } from '../../../src/mango/index-definitions.js';
import { afterPrefix, compareBytes, encodeKey, MAX_KEY_BYTES, storedBounds, storedKey } from '../../../src/mango/index-keys.js';

/** Values in CouchDB's collation order (strings as ICU orders them). */
const ORDERED: Json[] = [
  null,
  false,
  true,
  -Number.MAX_VALUE,
  -1e10,
  -42,
  -1.5,
  -Number.MIN_VALUE,
  0,
  Number.MIN_VALUE,
  0.5,
  1,
  42,
  1e300,
  '',
  ' ',
  '\u{1F600}',
  '0',
  'a',
  'A',
  'aa',
  'ab',
  'b',
  'B',
  'é',
  '\uffff',
  [],
  [null],
  [0],
  [0, 0],
  [1],
  ['a'],
  ['a', []],
  [[]],
  {},
  { a: 1 },
  { a: 1, b: 2 },
  { a: 2 },
  { b: 0 },
];

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

test('encoded keys sort as the values collate, pair by pair', () => {
  for (let i = 0; i < ORDERED.length; i++) {
    for (let j = 0; j < ORDERED.length; j++) {
      const a = ORDERED[i]!;
      const b = ORDERED[j]!;
      assert.equal(sign(compareBytes(encodeKey([a]), encodeKey([b]))), sign(i - j), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      assert.equal(sign(compare(a, b)), sign(i - j), `collation itself: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    }
  }
});

test('-0 and 0 are one key', () => {
  assert.equal(compareBytes(encodeKey([-0]), encodeKey([0])), 0);
});

test('compound keys sort by their first field, then the next; every key with a prefix is in [prefix, afterPrefix)', () => {
  const keys: Json[][] = [['a', 1], ['a', 'x'], ['a', [1]], ['ab', null], ['b', -1]];
  for (let i = 1; i < keys.length; i++) assert.ok(compareBytes(encodeKey(keys[i - 1]!), encodeKey(keys[i]!)) < 0, JSON.stringify(keys[i]));
  const prefix = encodeKey(['a']);
  for (const key of keys) {
    const encoded = encodeKey(key);
    const inside = compareBytes(encoded, prefix) >= 0 && compareBytes(encoded, afterPrefix(prefix)) < 0;
    assert.equal(inside, key[0] === 'a', JSON.stringify(key));
  }
});

test('long keys are stored by their first bytes, and the stored bounds still hold them', () => {
  const long = (tail: string): Uint8Array => encodeKey(['x'.repeat(2000) + tail]);
  const keys = [long('a'), long('b'), long('c')];
  for (const key of keys) assert.equal(storedKey(key).length, MAX_KEY_BYTES);
  const bounds = storedBounds(long('b'), long('c'));
  const stored = storedKey(long('b'));
  assert.ok(compareBytes(stored, bounds.gte!) >= 0 && compareBytes(stored, bounds.lt!) < 0);
  const short = storedBounds(encodeKey(['a']), encodeKey(['y']));
  assert.deepEqual(short, { gte: encodeKey(['a']), lt: encodeKey(['y']) }, 'short bounds unchanged');
  assert.ok(compareBytes(storedKey(long('a')), short.lt!) < 0 && compareBytes(storedKey(long('a')), short.gte!) > 0);
});

test('an index signature names the key encoding: indexes stored in code point order are not read, but built again', () => {
  // The signature before keys were encoded in view collation: a hash of the fields and the partial filter only.
  const codePointEra = (fields: string[], partial: object): string => createHash('sha256').update(JSON.stringify([fields, partial])).digest('hex').slice(0, 32);
  assert.notEqual(signatureOf([{ field: 'f', direction: 'asc' }], undefined), codePointEra(['f'], {}));
  assert.notEqual(signatureOf([{ field: 'a', direction: 'asc' }, { field: 'b', direction: 'asc' }], { x: 1 }), codePointEra(['a', 'b'], { x: 1 }));
  assert.equal(signatureOf([{ field: 'f', direction: 'desc' }], undefined), signatureOf([{ field: 'f', direction: 'asc' }], undefined), 'still one set of rows per definition');
});
