import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideLocalWrite, localDocument, localRevNumber } from '../../../../src/storage/kit/local-revisions.js';

const CONFLICT = { ok: false, id: '_local/cp', error: 'conflict', reason: 'Document update conflict.' };

describe('local revisions', () => {
  it('reads 0-N as the counter N and an absent revision as 0', () => {
    assert.equal(localRevNumber(undefined), 0);
    assert.equal(localRevNumber('0-0'), 0);
    assert.equal(localRevNumber('0-17'), 17);
  });

  it('reads anything but 0-N (document revisions, leading zeros, junk) as matching no counter', () => {
    for (const rev of ['1-abc', '0-01', '0-', '0-1x', '', ' 0-1']) assert.ok(Number.isNaN(localRevNumber(rev)), rev);
  });

  it('a put naming the current revision stores the next counter', () => {
    assert.deepEqual(decideLocalWrite('_local/cp', 2, '0-2', false), {
      apply: true,
      counter: 3,
      result: { ok: true, id: '_local/cp', rev: '0-3' },
    });
  });

  it('a put without a revision creates the document at 0-1, and conflicts when it exists', () => {
    assert.deepEqual(decideLocalWrite('_local/cp', undefined, undefined, false).result, { ok: true, id: '_local/cp', rev: '0-1' });
    assert.deepEqual(decideLocalWrite('_local/cp', 1, undefined, false), { apply: false, result: CONFLICT });
  });

  it('a stale revision, or one naming a missing document, is a conflict', () => {
    assert.deepEqual(decideLocalWrite('_local/cp', 2, '0-1', false), { apply: false, result: CONFLICT });
    assert.deepEqual(decideLocalWrite('_local/cp', undefined, '0-3', true), { apply: false, result: CONFLICT });
  });

  it('a delete naming the current revision answers 0-0', () => {
    assert.deepEqual(decideLocalWrite('_local/cp', 4, '0-4', true), {
      apply: true,
      counter: 0,
      result: { ok: true, id: '_local/cp', rev: '0-0' },
    });
  });

  it('a stored row reads back with its 0-N revision and parsed body', () => {
    assert.deepEqual(localDocument('_local/cp', 5, '{"seq":9}'), { id: '_local/cp', rev: '0-5', body: { seq: 9 } });
  });
});
