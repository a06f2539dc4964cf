import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { builtinStats } from '../../../src/views/builtin-reduces.js';
import { CouchError } from '../../../src/errors/couch-error.js';

const stats = (sum: number, count: number, min: number, max: number, sumsqr: number) => ({ sum, count, min, max, sumsqr });

/** The CouchError `builtinStats` throws for these values (CouchDB's `invalid_value`). */
function refusal(values: unknown[]): CouchError {
  try {
    builtinStats(values as never);
  } catch (error) {
    assert.ok(error instanceof CouchError, String(error));
    return error;
  }
  assert.fail('expected _stats to refuse the values');
}

describe('_stats, as couch_query_servers.erl computes it', () => {
  test('numbers: sum, count, min, max, sumsqr; no rows: all zero', () => {
    assert.deepEqual(builtinStats([1, 2, 3]), stats(6, 3, 1, 3, 14));
    assert.deepEqual(builtinStats([]), stats(0, 0, 0, 0, 0));
  });

  test('arrays of the same length: stats per position, nested arrays nest', () => {
    assert.deepEqual(builtinStats([[1, 2], [3, 4]]), [stats(4, 2, 1, 3, 10), stats(6, 2, 2, 4, 20)]);
    assert.deepEqual(builtinStats([[[1]], [[2]]]), [[stats(3, 2, 1, 2, 5)]]);
  });

  test('already reduced {sum, count, min, max, sumsqr} objects combine with numbers', () => {
    assert.deepEqual(builtinStats([stats(10, 4, 1, 4, 30), 5]), stats(15, 5, 1, 5, 55));
    assert.deepEqual(builtinStats([5, stats(10, 4, 1, 4, 30)]), stats(15, 5, 1, 5, 55));
  });

  test('arrays of different lengths are refused with invalid_value (500), whichever comes first', () => {
    for (const values of [[[1, 2, 3], [1, 2]], [[1, 2], [1, 2, 3]]]) {
      const error = refusal(values);
      assert.equal(error.status, 500);
      assert.equal(error.error, 'invalid_value');
      assert.match(error.reason, /same length, not (3 and 2|2 and 3)/);
    }
  });

  test('a number mixed with an array is refused with invalid_value, not a TypeError', () => {
    for (const values of [[1, [1, 2]], [[1, 2], 1]]) assert.equal(refusal(values).error, 'invalid_value');
  });

  test('strings and incomplete objects are refused with CouchDB\'s reasons', () => {
    assert.equal(refusal(['lala']).reason, `The _stats function requires that map values be numbers or arrays of numbers, not '"lala"'`);
    assert.match(refusal([{ sum: 1, count: 1, min: 1, max: 1 }]).reason, /^user _stats input missing required field sumsqr/);
    assert.match(refusal([{ sum: 'x', count: 1, min: 1, max: 1, sumsqr: 1 }]).reason, /^non-numeric _stats input received for sum: "x"/);
  });
});
