import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeCookieValue, mintCookieValue, parseHashAlgorithms, verifyCookieMac } from '../../../../src/auth/cookie/codec.js';
import { SecretRing } from '../../../../src/auth/cookie/secret-ring.js';

function clock(start = 1700000000000) {
  const state = { now: start };
  return { state, now: () => state.now };
}

describe('SecretRing', () => {
  test('no secret: no current, nothing valid', () => {
    const ring = new SecretRing(clock().now);
    assert.equal(ring.current(), undefined);
    assert.deepEqual(ring.valid(), []);
  });

  test('an initial secret is current; an empty one counts as none', () => {
    assert.deepEqual(new SecretRing(clock().now, 's1').valid(), ['s1']);
    assert.equal(new SecretRing(clock().now, '').current(), undefined);
  });

  test('the first secret replaces nothing, so nothing is retired', () => {
    const ring = new SecretRing(clock().now);
    ring.rotate('s1', 600);
    assert.equal(ring.current(), 's1');
    assert.deepEqual(ring.valid(), ['s1']);
  });

  test('a replaced secret stays valid for the grace period, then is dropped', () => {
    const { state, now } = clock();
    const ring = new SecretRing(now, 's1');
    ring.rotate('s2', 600);
    assert.equal(ring.current(), 's2');
    assert.deepEqual(ring.valid(), ['s2', 's1']);
    state.now += 599_999;
    assert.deepEqual(ring.valid(), ['s2', 's1']);
    state.now += 1;
    assert.deepEqual(ring.valid(), ['s2']);
  });

  test('a zero or negative grace drops the old secret at once (pre-3.5.2 behaviour)', () => {
    const ring = new SecretRing(clock().now, 's1');
    ring.rotate('s2', 0);
    assert.deepEqual(ring.valid(), ['s2']);
    ring.rotate('s3', -10);
    assert.deepEqual(ring.valid(), ['s3']);
  });

  test('several rotations: current first, then the most recently replaced', () => {
    const { state, now } = clock();
    const ring = new SecretRing(now, 's1');
    ring.rotate('s2', 600);
    state.now += 100_000;
    ring.rotate('s3', 600);
    assert.deepEqual(ring.valid(), ['s3', 's2', 's1']);
    state.now += 500_000; // s1 retired at t0 expires now; s2 retired at t0+100 s has 100 s left
    assert.deepEqual(ring.valid(), ['s3', 's2']);
  });

  test('setting the same secret again neither retires nor extends anything', () => {
    const { state, now } = clock();
    const ring = new SecretRing(now, 's1');
    ring.rotate('s2', 600);
    state.now += 500_000;
    ring.rotate('s2', 600);
    state.now += 100_000;
    assert.deepEqual(ring.valid(), ['s2']);
  });

  test('rotating back to a retired secret makes it current and retires the other', () => {
    const { state, now } = clock();
    const ring = new SecretRing(now, 's1');
    ring.rotate('s2', 600);
    state.now += 10_000;
    ring.rotate('s1', 600);
    assert.equal(ring.current(), 's1');
    assert.deepEqual(ring.valid(), ['s1', 's2']);
    state.now += 10_000;
    ring.rotate('s3', 600);
    // s1 was retired again just now, so it is newer than s2 and lives longer.
    assert.deepEqual(ring.valid(), ['s3', 's1', 's2']);
    state.now += 595_000;
    assert.deepEqual(ring.valid(), ['s3', 's1']);
  });

  test('removing the secret ends every session, even ones in grace', () => {
    const { state, now } = clock();
    const ring = new SecretRing(now, 's1');
    ring.rotate('s2', 600);
    ring.rotate(undefined, 600);
    assert.equal(ring.current(), undefined);
    assert.deepEqual(ring.valid(), []);
    ring.rotate('', 600);
    assert.deepEqual(ring.valid(), []);
    // A new secret within the grace brings the retired ones back until they expire.
    state.now += 10_000;
    ring.rotate('s3', 600);
    assert.deepEqual(ring.valid(), ['s3', 's2', 's1']);
  });

  test('a cookie signed before a rotation verifies during the grace and not after it', () => {
    const { state, now } = clock();
    const algorithms = parseHashAlgorithms('sha256, sha');
    const ring = new SecretRing(now, 'old-secret');
    const decoded = decodeCookieValue(mintCookieValue('jan', Math.floor(now() / 1000), 'old-secret', 'salt', 'sha256'));
    ring.rotate('new-secret', 600);
    assert.equal(verifyCookieMac(decoded, ring.valid(), 'salt', algorithms), true);
    state.now += 600_000;
    assert.equal(verifyCookieMac(decoded, ring.valid(), 'salt', algorithms), false);
  });
});
