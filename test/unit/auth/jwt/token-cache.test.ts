import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';

import { TokenCache, tokenDigest } from '../../../../src/auth/jwt/token-cache.js';
import { NOW, NOW_MS } from './fixtures.js';

const user = { name: 'alice', roles: ['r1'] };

describe('TokenCache', () => {
  test('a stored token answers with a copy of its user', () => {
    const cache = new TokenCache(10, 60_000);
    cache.set('t1', user, NOW_MS, NOW + 100);
    const first = cache.get('t1', NOW_MS);
    assert.deepEqual(first, user);
    first?.roles.push('mutated');
    assert.deepEqual(cache.get('t1', NOW_MS), user);
    assert.equal(cache.get('t2', NOW_MS), undefined);
  });

  test('an entry ends exactly at exp (seconds), as a strict exp > now check would', () => {
    const cache = new TokenCache(10, 3_600_000);
    cache.set('t', user, NOW_MS, NOW + 5);
    assert.deepEqual(cache.get('t', NOW_MS + 4_999), user);
    assert.equal(cache.get('t', NOW_MS + 5_000), undefined);
    assert.equal(cache.size, 0);
  });

  test('without exp an entry ends after the maximum age', () => {
    const cache = new TokenCache(10, 60_000);
    cache.set('t', user, NOW_MS, undefined);
    assert.deepEqual(cache.get('t', NOW_MS + 59_999), user);
    assert.equal(cache.get('t', NOW_MS + 60_000), undefined);
  });

  test('the maximum age also caps a far exp; a non-numeric exp is ignored for the bound', () => {
    const cache = new TokenCache(10, 60_000);
    cache.set('far', user, NOW_MS, NOW + 86_400);
    cache.set('text', user, NOW_MS, 'tomorrow');
    assert.equal(cache.get('far', NOW_MS + 60_000), undefined);
    assert.equal(cache.get('text', NOW_MS + 60_000), undefined);
  });

  test('a token already past exp (exp not required) is not stored', () => {
    const cache = new TokenCache(10, 60_000);
    cache.set('t', user, NOW_MS, NOW - 1);
    assert.equal(cache.size, 0);
  });

  test('least recently used entries are evicted beyond the bound', () => {
    const cache = new TokenCache(2, 60_000);
    cache.set('a', user, NOW_MS, undefined);
    cache.set('b', user, NOW_MS, undefined);
    assert.ok(cache.get('a', NOW_MS)); // a is now the most recent
    cache.set('c', user, NOW_MS, undefined);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('b', NOW_MS), undefined);
    assert.ok(cache.get('a', NOW_MS));
    assert.ok(cache.get('c', NOW_MS));
  });

  test('size 0 disables the cache', () => {
    const cache = new TokenCache(0, 60_000);
    cache.set('a', user, NOW_MS, undefined);
    assert.equal(cache.get('a', NOW_MS), undefined);
  });

  test('clear drops everything', () => {
    const cache = new TokenCache(10, 60_000);
    cache.set('a', user, NOW_MS, undefined);
    cache.clear();
    assert.equal(cache.get('a', NOW_MS), undefined);
  });

  test('keys are SHA-256 digests, never the token', () => {
    assert.equal(tokenDigest('abc'), createHash('sha256').update('abc').digest('base64url'));
    assert.notEqual(tokenDigest('abc'), tokenDigest('abd'));
  });
});
