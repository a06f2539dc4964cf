import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VerifiedPasswordCache } from '../../../src/users/password-cache.js';

describe('verified-password cache', () => {
  const make = (now: () => number, maxObjects = 10) => new VerifiedPasswordCache({ enabled: true, maxObjects, maxIdleMs: 1000, now });

  test('a remembered password matches, another does not, an unknown user is a miss', () => {
    const cache = make(() => 0);
    cache.remember('bob', 'salt1', 'pw');
    assert.equal(cache.check('bob', 'salt1', 'pw'), true);
    assert.equal(cache.check('bob', 'salt1', 'other'), false);
    assert.equal(cache.check('alice', 'salt1', 'pw'), undefined);
  });

  test('a new salt (password change) never meets the old entry', () => {
    const cache = make(() => 0);
    cache.remember('bob', 'salt1', 'pw');
    assert.equal(cache.check('bob', 'salt2', 'pw'), undefined);
    assert.equal(cache.check('bob', 'salt2', 'other'), undefined, 'a miss, not a wrong password');
    cache.remember('bob', 'salt2', 'new-pw');
    assert.equal(cache.check('bob', 'salt2', 'new-pw'), true);
    assert.equal(cache.check('bob', 'salt1', 'pw'), undefined, 'the new password replaced the old entry');
    assert.equal(cache.size, 1);
  });

  test('entries expire after max_idle without use', () => {
    let now = 0;
    const cache = make(() => now);
    cache.remember('bob', 's', 'pw');
    now = 900;
    assert.equal(cache.check('bob', 's', 'pw'), true);
    now = 1800;
    assert.equal(cache.check('bob', 's', 'pw'), true, 'use refreshes the idle clock');
    now = 2801;
    assert.equal(cache.check('bob', 's', 'pw'), undefined);
  });

  test('the least recently used entry leaves first when full', () => {
    const cache = make(() => 0, 2);
    cache.remember('a', 's', 'pw');
    cache.remember('b', 's', 'pw');
    assert.equal(cache.check('a', 's', 'pw'), true);
    cache.remember('c', 's', 'pw');
    assert.equal(cache.check('b', 's', 'pw'), undefined);
    assert.equal(cache.check('a', 's', 'pw'), true);
    assert.equal(cache.size, 2);
  });

  test('repeated hits on the newest entry keep the least-recently-used order exact', () => {
    const cache = make(() => 0, 2);
    cache.remember('a', 's', 'pw');
    cache.remember('b', 's', 'pw');
    assert.equal(cache.check('b', 's', 'pw'), true);
    assert.equal(cache.check('b', 's', 'pw'), true);
    assert.equal(cache.check('a', 's', 'pw'), true);
    assert.equal(cache.check('a', 's', 'wrong'), false);
    cache.remember('c', 's', 'pw');
    assert.equal(cache.check('b', 's', 'pw'), undefined, 'b was used least recently');
    cache.forget('c');
    cache.remember('d', 's', 'pw');
    cache.remember('e', 's', 'pw');
    assert.equal(cache.check('a', 's', 'pw'), undefined, 'a became the oldest once c was forgotten');
    assert.equal(cache.check('d', 's', 'pw'), true);
    assert.equal(cache.check('e', 's', 'pw'), true);
  });

  test('forget drops a user, disabling drops everything', () => {
    const cache = make(() => 0);
    cache.remember('a', 's', 'pw');
    cache.remember('b', 's', 'pw');
    cache.forget('a');
    assert.equal(cache.check('a', 's', 'pw'), undefined);
    cache.configure({ enabled: false, maxObjects: 10, maxIdleMs: 1000 });
    assert.equal(cache.check('b', 's', 'pw'), undefined);
    assert.equal(cache.size, 0);
  });
});
