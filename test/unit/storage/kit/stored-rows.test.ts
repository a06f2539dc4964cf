import assert from 'node:assert/strict';
import { test } from 'node:test';
import { instanceStartTime } from '../../../../src/storage/kit/stored-rows.js';

test('instance_start_time is microseconds since the epoch and never repeats, even many within one millisecond', () => {
  const before = Date.now() * 1000;
  const issued = Array.from({ length: 2000 }, () => instanceStartTime());
  assert.equal(new Set(issued).size, issued.length);
  assert.ok(issued.every((value) => /^[0-9]+$/.test(value) && Number(value) >= before));
  assert.ok(Number(issued[0]) - before < 60_000_000, 'close to the wall clock');
});
