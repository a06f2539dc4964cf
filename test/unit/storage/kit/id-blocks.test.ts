/** Live-count changes summed per block of ids (src/storage/kit/id-blocks.ts), in UTF-8 byte order. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deltasByBlock, liveDelta } from '../../../../src/storage/kit/id-blocks.js';

describe('id blocks: changes summed per block', () => {
  it('puts each id in the last block starting at or below it, and ids below every block in block ""', () => {
    const deltas = deltasByBlock(['b', 'd', 'f'], [
      { id: 'a', delta: 1 },
      { id: 'b', delta: 1 },
      { id: 'c', delta: 1 },
      { id: 'c', delta: -1 },
      { id: 'd', delta: -1 },
      { id: 'e1', delta: 1 },
      { id: 'z', delta: 1 },
    ]);
    assert.deepEqual([...deltas], [['', 1], ['b', 1], ['d', 0], ['f', 1]]);
  });

  it('orders ids by UTF-8 bytes, as SQLite and PostgreSQL "C" do, not by UTF-16 units', () => {
    // U+FF5E is below U+1F600 in code points and UTF-8, above its surrogates in UTF-16.
    const deltas = deltasByBlock(['', '\uff5e'], [
      { id: 'z\u{1f600}', delta: 1 },
      { id: '\u{1f600}', delta: 1 },
      { id: '\uff00', delta: 1 },
    ]);
    assert.deepEqual([...deltas], [['', 2], ['\uff5e', 1]]);
  });

  it('counts a document that becomes live +1, one that stops being live -1, others 0', () => {
    assert.deepEqual([liveDelta(false, true), liveDelta(true, false), liveDelta(true, true), liveDelta(false, false)], [1, -1, 0, 0]);
  });
});
