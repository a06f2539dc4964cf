import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SampleWindow, summarise } from '../../../src/metrics/sample-window.js';

test('a histogram of no samples is all zeros, with CouchDB keys', () => {
  const empty = summarise([]);
  assert.deepEqual(Object.keys(empty), ['min', 'max', 'arithmetic_mean', 'geometric_mean', 'harmonic_mean', 'median', 'variance', 'standard_deviation', 'skewness', 'kurtosis', 'percentile', 'histogram', 'n']);
  assert.equal(empty.n, 0);
  assert.equal(empty.max, 0);
});

test('the statistics of known samples', () => {
  const stats = summarise([1, 2, 3, 4, 100]);
  assert.deepEqual([stats.min, stats.max, stats.median, stats.arithmetic_mean, stats.n], [1, 100, 3, 22, 5]);
  assert.deepEqual(stats.percentile, [[50, 3], [75, 4], [90, 100], [95, 100], [99, 100], [999, 100]]);
  assert.equal(stats.geometric_mean, Math.round(Math.exp((Math.log(1) + Math.log(2) + Math.log(3) + Math.log(4) + Math.log(100)) / 5) * 1000) / 1000);
  assert.ok(stats.skewness > 0, 'one large sample skews right');
  assert.equal(stats.histogram.reduce((sum, [, count]) => sum + count, 0), 5);
});

test('samples older than the window are dropped', () => {
  let now = 0;
  const window = new SampleWindow(() => 10_000, () => now);
  window.add(5);
  now = 6_000;
  window.add(7);
  assert.deepEqual(window.samples(), [5, 7]);
  now = 12_000;
  assert.deepEqual(window.samples(), [7]);
  now = 30_000;
  assert.equal(window.summary().n, 0);
});
