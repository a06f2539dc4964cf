import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Sequences } from '../../../src/databases/sequences.js';

const INSTANCE = '1764000000000000';

test('a sequence reads back as the number it was made from, only on the instance that made it', () => {
  const sequences = new Sequences(INSTANCE);
  for (const seq of [0, 1, 42, 2 ** 40]) {
    const text = sequences.format(seq);
    assert.match(text, new RegExp(`^${seq}-[A-Za-z0-9_-]+$`));
    assert.equal(sequences.parse(text, 7), seq);
    assert.equal(new Sequences('1764000000000001').parse(text, 7), 0, 'another instance rewinds');
  }
  assert.equal(sequences.format(5), new Sequences(INSTANCE).format(5), 'the same text every time');
});

test('since= 0, empty, now, bare and quoted numbers; past 2^53 is capped; an edited opaque part is refused', () => {
  const sequences = new Sequences(INSTANCE);
  assert.equal(sequences.parse(null, 9), 0);
  assert.equal(sequences.parse('', 9), 0);
  assert.equal(sequences.parse('now', 9), 9);
  assert.equal(sequences.parse('12', 9), 12);
  assert.equal(sequences.parse('"12"', 9), 12);
  assert.equal(sequences.parse('99999999999999999999', 9), Number.MAX_SAFE_INTEGER);
  const padded = `${sequences.format(3)}=`;
  assert.throws(() => sequences.parse(padded, 9), /Malformed sequence/);
});
