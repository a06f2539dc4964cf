import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Lockout, lockoutMode } from '../../../src/users/lockout.js';

describe('lockout counters', () => {
  const settings = { mode: 'enforce' as const, threshold: 3, maxObjects: 100, maxLifetimeMs: 1000 };

  test('locked after threshold failures for the same address, name and salt only', () => {
    const lockout = new Lockout(settings, () => 0);
    for (let i = 0; i < 3; i++) {
      assert.equal(lockout.isLocked('1.1.1.1', 'bob', 's1'), false);
      lockout.recordFailure('1.1.1.1', 'bob', 's1');
    }
    assert.equal(lockout.isLocked('1.1.1.1', 'bob', 's1'), true);
    assert.equal(lockout.isLocked('2.2.2.2', 'bob', 's1'), false, 'another address');
    assert.equal(lockout.isLocked('1.1.1.1', 'bob', 's2'), false, 'a new password (salt)');
    assert.equal(lockout.isLocked('1.1.1.1', 'Bob', 's1'), false, 'names are exact');
  });

  test('the lock ends max_lifetime after the first failure, not the last', () => {
    let now = 0;
    const lockout = new Lockout(settings, () => now);
    lockout.recordFailure('a', 'n', 's');
    now = 900;
    lockout.recordFailure('a', 'n', 's');
    lockout.recordFailure('a', 'n', 's');
    assert.equal(lockout.isLocked('a', 'n', 's'), true);
    now = 1000;
    assert.equal(lockout.isLocked('a', 'n', 's'), false);
  });

  test('mode off counts nothing; unknown modes are off', () => {
    const lockout = new Lockout({ ...settings, mode: 'off' }, () => 0);
    for (let i = 0; i < 5; i++) lockout.recordFailure('a', 'n', 's');
    assert.equal(lockout.isLocked('a', 'n', 's'), false);
    assert.equal(lockout.size, 0);
    assert.equal(lockoutMode('Enforce'), 'off');
    assert.equal(lockoutMode('warn'), 'warn');
  });

  test('at most max_objects entries are kept, the oldest leave first', () => {
    const lockout = new Lockout({ ...settings, maxObjects: 2 }, () => 0);
    lockout.recordFailure('a', 'x', 's');
    lockout.recordFailure('b', 'x', 's');
    lockout.recordFailure('c', 'x', 's');
    assert.equal(lockout.size, 2);
  });
});
