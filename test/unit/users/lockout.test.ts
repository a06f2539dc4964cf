import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { asLockoutSnapshot, Lockout, lockoutMode } from '../../../src/users/lockout.js';

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

describe('lockout admission: attempts in flight count as possible failures', () => {
  const settings = { mode: 'enforce' as const, threshold: 3, maxObjects: 100, maxLifetimeMs: 1000 };

  /** The admission, and whether it has been decided after every pending callback has run. */
  async function pending<T>(promise: Promise<T>): Promise<{ decided: () => boolean; value: Promise<T> }> {
    let decided = false;
    const value = promise.then((result) => {
      decided = true;
      return result;
    });
    await new Promise((resolve) => setImmediate(resolve));
    return { decided: () => decided, value };
  }

  test('up to threshold attempts are admitted at once; the next one waits and is locked when they all fail', async () => {
    const lockout = new Lockout(settings, () => 0);
    const first = await Promise.all([1, 2, 3].map(() => lockout.admit('a', 'n', 's')));
    assert.deepEqual(first.map((ticket) => ticket.locked), [false, false, false]);
    const fourth = await pending(lockout.admit('a', 'n', 's'));
    assert.equal(fourth.decided(), false, 'waits while 3 attempts may still fail');
    for (const ticket of first) ticket.settle(true);
    assert.equal((await fourth.value).locked, true);
    assert.equal(lockout.isLocked('a', 'n', 's'), true);
  });

  test('admitNow decides at once, or answers undefined without reserving a place when the attempt would wait', () => {
    const lockout = new Lockout(settings, () => 0);
    const first = [1, 2, 3].map(() => lockout.admitNow('a', 'n', 's'));
    assert.deepEqual(first.map((ticket) => ticket?.locked), [false, false, false]);
    assert.equal(lockout.admitNow('a', 'n', 's'), undefined, 'three attempts in flight may still fail');
    assert.equal(lockout.admitNow('a', 'n', 's'), undefined);
    for (const ticket of first) ticket!.settle(false);
    const again = [1, 2, 3].map(() => lockout.admitNow('a', 'n', 's'));
    assert.deepEqual(again.map((ticket) => ticket?.locked), [false, false, false], 'the refused calls held no place');
    assert.equal(lockout.admitNow('a', 'n', 's'), undefined);
    for (const ticket of again) ticket!.settle(true);
    assert.equal(lockout.admitNow('a', 'n', 's')?.locked, true);
  });

  test('idle only while no failure is recorded and no attempt is in flight; an unreserved ticket still counts its failure', () => {
    const lockout = new Lockout(settings, () => 0);
    assert.equal(lockout.idle, true);
    const ticket = lockout.admitNow('a', 'n', 's')!;
    assert.equal(lockout.idle, false, 'an attempt in flight');
    ticket.settle(false);
    assert.equal(lockout.idle, true);
    lockout.unreserved('a', 'n', 's').settle(true);
    assert.equal(lockout.idle, false, 'a failure recorded');
    for (let i = 0; i < 2; i++) lockout.unreserved('a', 'n', 's').settle(true);
    assert.equal(lockout.isLocked('a', 'n', 's'), true);
    assert.equal(new Lockout({ ...settings, threshold: 0 }, () => 0).idle, false, 'a threshold of 0 locks everyone');
  });

  test('a waiting attempt goes ahead when one in flight succeeds', async () => {
    const lockout = new Lockout(settings, () => 0);
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => lockout.admit('a', 'n', 's')));
    const waiting = await pending(lockout.admit('a', 'n', 's'));
    a!.settle(true);
    b!.settle(true);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(waiting.decided(), false, '2 failures + 1 in flight still reach 3');
    c!.settle(false);
    assert.equal((await waiting.value).locked, false);
  });

  test('recorded failures leave fewer places: after 2 failures only one attempt is in flight at a time', async () => {
    const lockout = new Lockout(settings, () => 0);
    lockout.recordFailure('a', 'n', 's');
    lockout.recordFailure('a', 'n', 's');
    const only = await lockout.admit('a', 'n', 's');
    const next = await pending(lockout.admit('a', 'n', 's'));
    assert.equal(next.decided(), false);
    only.settle(false);
    assert.equal((await next.value).locked, false);
  });

  test('settling twice counts one failure; another address, name or salt never waits', async () => {
    const lockout = new Lockout(settings, () => 0);
    const tickets = await Promise.all([1, 2, 3].map(() => lockout.admit('a', 'n', 's')));
    for (const other of [lockout.admit('b', 'n', 's'), lockout.admit('a', 'm', 's'), lockout.admit('a', 'n', 't')]) {
      assert.equal((await pending(other)).decided(), true);
    }
    tickets[0]!.settle(true);
    tickets[0]!.settle(true);
    tickets[1]!.settle(false);
    tickets[2]!.settle(false);
    assert.equal(lockout.isLocked('a', 'n', 's'), false);
    const after = await Promise.all([1, 2].map(() => lockout.admit('a', 'n', 's')));
    for (const ticket of after) ticket.settle(true);
    assert.equal(lockout.isLocked('a', 'n', 's'), true, '1 + 2 failures');
  });

  test('mode warn never waits: the ticket says locked once the failures are there, and failures still count', async () => {
    const lockout = new Lockout({ ...settings, mode: 'warn' }, () => 0);
    const tickets = await Promise.all([1, 2, 3, 4, 5].map(() => lockout.admit('a', 'n', 's')));
    assert.deepEqual(tickets.map((ticket) => ticket.locked), [false, false, false, false, false]);
    for (const ticket of tickets) ticket.settle(true);
    assert.equal((await lockout.admit('a', 'n', 's')).locked, true);
  });

  test('mode off: every attempt is admitted and nothing is counted', async () => {
    const lockout = new Lockout({ ...settings, mode: 'off' }, () => 0);
    const tickets = await Promise.all([1, 2, 3, 4].map(() => lockout.admit('a', 'n', 's')));
    for (const ticket of tickets) ticket.settle(true);
    assert.equal((await lockout.admit('a', 'n', 's')).locked, false);
    assert.equal(lockout.size, 0);
  });
});

describe('a lockout handed to a process that starts later (issue 32 item 15)', () => {
  const settings = { mode: 'enforce' as const, threshold: 3, maxObjects: 100, maxLifetimeMs: 1000 };

  test('issue 32 item 15: a snapshot merged into an empty lockout locks what it locked, and expires when it would have', () => {
    let now = 0;
    const sibling = new Lockout(settings, () => now);
    for (let i = 0; i < 3; i++) sibling.recordRemoteFailure('a', 'n', 's');
    sibling.recordFailure('b', 'n', 's');
    now = 400;
    const replacement = new Lockout(settings, () => now);
    replacement.merge(asLockoutSnapshot(JSON.parse(JSON.stringify(sibling.snapshot()))));
    assert.equal(replacement.isLocked('a', 'n', 's'), true);
    assert.equal(replacement.failuresOf('b', 'n', 's'), 1);
    now = 1000;
    assert.equal(replacement.isLocked('a', 'n', 's'), false, 'the first failure was 1000 ms ago');
  });

  test('merging keeps the larger count and skips rows that are expired or malformed', () => {
    const lockout = new Lockout(settings, () => 0);
    lockout.recordFailure('a', 'n', 's');
    lockout.recordFailure('a', 'n', 's');
    const [[key]] = lockout.snapshot() as [[string, number, number]];
    lockout.merge(asLockoutSnapshot([[key, 1, 0], ['x\u0000n\u0000s', 2, 5000], ['y', -1, 0], 'junk', [key]]));
    assert.equal(lockout.failuresOf('a', 'n', 's'), 2);
    assert.equal(lockout.size, 1);
  });
});
