import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TotpReplayGuard } from '../../../src/users/totp-replay.js';

describe('TOTP replay guard', () => {
  test('a step is accepted once; it and earlier steps are refused afterwards; later steps pass', () => {
    const guard = new TotpReplayGuard();
    assert.equal(guard.accept('bob', 's1', 100), true);
    assert.equal(guard.accept('bob', 's1', 100), false, 'the same code again');
    assert.equal(guard.accept('bob', 's1', 99), false, 'an older code after a newer one');
    assert.equal(guard.accept('bob', 's1', 101), true);
    assert.equal(guard.accept('bob', 's1', 101), false);
  });

  test('per user name and password generation (salt)', () => {
    const guard = new TotpReplayGuard();
    assert.equal(guard.accept('bob', 's1', 100), true);
    assert.equal(guard.accept('alice', 's1', 100), true, 'another user');
    assert.equal(guard.accept('bob', 's2', 100), true, 'a new password');
    assert.equal(guard.accept('Bob', 's1', 100), true, 'names are exact');
    // The separator keeps ("a\0b", "c") apart from ("a", "b\0c").
    assert.equal(guard.accept('a', 'b\u0000c', 5), true);
    assert.equal(guard.accept('a\u0000b', 'c', 5), true);
    assert.equal(guard.size, 6);
  });

  test('bounded: the user who logged in longest ago is forgotten first', () => {
    const guard = new TotpReplayGuard(2);
    guard.accept('a', 's', 1);
    guard.accept('b', 's', 1);
    guard.accept('a', 's', 2); // a is now the most recent
    guard.accept('c', 's', 1); // evicts b
    assert.equal(guard.size, 2);
    assert.equal(guard.accept('a', 's', 2), false, 'a is remembered');
    assert.equal(guard.accept('c', 's', 1), false, 'c is remembered');
    assert.equal(guard.accept('b', 's', 1), true, 'b was forgotten');
  });
});
