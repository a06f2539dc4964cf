import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { digestsEqual, keyedSha256, storedDigestEquals } from '../../../src/crypto/crypto.js';

describe('keyed digests', () => {
  test('keyedSha256 is the base64 SHA-256 of key, NUL, text: equal inputs give equal digests', () => {
    const digest = keyedSha256('key', 'salt\u0000password');
    assert.equal(digest.length, 44);
    assert.ok(digestsEqual(digest, keyedSha256('key', 'salt\u0000password')));
    assert.equal(digest, Buffer.from(digest, 'base64').toString('base64'));
  });

  test('another key, salt or password gives another digest', () => {
    const digest = keyedSha256('key', 'salt\u0000password');
    assert.equal(digestsEqual(digest, keyedSha256('other', 'salt\u0000password')), false);
    assert.equal(digestsEqual(digest, keyedSha256('key', 'salt\u0000passwore')), false);
    assert.equal(digestsEqual(digest, keyedSha256('key', 'salu\u0000password')), false);
  });

  test('digestsEqual compares every character, and lengths', () => {
    assert.equal(digestsEqual('abcd', 'abcd'), true);
    assert.equal(digestsEqual('abcd', 'abce'), false);
    assert.equal(digestsEqual('xbcd', 'abcd'), false);
    assert.equal(digestsEqual('abc', 'abcd'), false);
    assert.equal(digestsEqual('', ''), true);
  });

  test('storedDigestEquals compares the 32 bytes of a latin1 digest with stored bytes, whatever the scratch held', () => {
    const fresh = keyedSha256('key', 'salt\u0000password', 'latin1');
    assert.equal(fresh.length, 32);
    const stored = Buffer.from(keyedSha256('key', 'salt\u0000password'), 'base64');
    const scratch = Buffer.alloc(32, 0xff);
    assert.equal(storedDigestEquals(stored, fresh, scratch), true);
    assert.equal(storedDigestEquals(stored, keyedSha256('key', 'salt\u0000passwore', 'latin1'), scratch), false);
    assert.equal(storedDigestEquals(stored, fresh, scratch), true, 'the scratch left by a mismatch changes nothing');
    assert.equal(storedDigestEquals(stored, fresh.slice(1), scratch), false, 'lengths');
    assert.equal(storedDigestEquals(stored, fresh, Buffer.alloc(31)), false, 'a scratch of another length');
  });
});
