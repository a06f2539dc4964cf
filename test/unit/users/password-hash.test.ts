import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pbkdf2Hex } from '../../../src/crypto/crypto.js';
import { hashAdminPassword, parseAdminHash, verifyPasswordHash } from '../../../src/users/password-hash.js';

const limits = { min: 1, max: 1000000000 };
const SALT = '1112283cf988a34f124200a050d308a1';

describe('password hashes', () => {
  test('PBKDF2-SHA1 vectors of CouchDB and RFC 6070', async () => {
    assert.equal(await pbkdf2Hex('password', 'salt', 1, 'sha1'), '0c60c80f961f0e71f3a9b524af6012062fe037a6');
    assert.equal(await pbkdf2Hex('password', 'salt', 2, 'sha1'), 'ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957');
    assert.equal(await pbkdf2Hex('password', 'salt', 4096, 'sha1'), '4b007901b765489abead49d926f721d065a429c1');
    // The salt is used as its ASCII text, not hex-decoded (reference §2.5).
    assert.equal(await pbkdf2Hex('apple', SALT, 10, 'sha1'), 'e579375db0e0c6a6fc79cd9e36a36859f71575c3');
    assert.equal(await pbkdf2Hex('apple', SALT, 10, 'sha256'), '897e67c09d4a1fb1a8fd499c9a569904fe9dc85fbbfb45f3f486fcf0bd3fa423');
  });

  const formats: [string, string, ReturnType<typeof parseAdminHash>][] = [
    ['3.4+ form', `-pbkdf2:sha256-897e67c09d4a1fb1a8fd499c9a569904fe9dc85fbbfb45f3f486fcf0bd3fa423,${SALT},10`, { scheme: 'pbkdf2', prf: 'sha256', derivedKey: '897e67c09d4a1fb1a8fd499c9a569904fe9dc85fbbfb45f3f486fcf0bd3fa423', salt: SALT, iterations: 10 }],
    ['3.3 SHA-1 form', `-pbkdf2-e579375db0e0c6a6fc79cd9e36a36859f71575c3,${SALT},10`, { scheme: 'pbkdf2', prf: 'sha', derivedKey: 'e579375db0e0c6a6fc79cd9e36a36859f71575c3', salt: SALT, iterations: 10 }],
    ['hashed (simple) form', `-hashed-d4b5d8403f6c1d1c7975fb19cbbacf260cebecdf,${SALT}`, { scheme: 'simple', passwordSha: 'd4b5d8403f6c1d1c7975fb19cbbacf260cebecdf', salt: SALT }],
    ['plaintext', 'apple', undefined],
    ['missing iterations', `-pbkdf2:sha256-abcd,${SALT}`, undefined],
    ['non-numeric iterations', `-pbkdf2:sha256-abcd,${SALT},ten`, undefined],
  ];
  for (const [title, value, expected] of formats) {
    test(`admin hash format: ${title}`, () => assert.deepEqual(parseAdminHash(value), expected));
  }

  test('every recognised admin form verifies apple and refuses pear', async () => {
    for (const [, value, parsed] of formats) {
      if (!parsed) continue;
      assert.equal(await verifyPasswordHash(parsed, 'apple', limits), true, value);
      assert.equal(await verifyPasswordHash(parsed, 'pear', limits), false, value);
    }
  });

  test('new admin hashes are -pbkdf2:sha256-<64 hex>,<32 hex salt>,<iterations> and verify', async () => {
    const value = await hashAdminPassword('s3cret', 'sha256', 1000);
    assert.match(value, /^-pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},1000$/);
    assert.equal(await verifyPasswordHash(parseAdminHash(value)!, 's3cret', limits), true);
    assert.notEqual(await hashAdminPassword('s3cret', 'sha256', 1000), value, 'a fresh salt each time');
  });

  test('simple+pbkdf2 runs PBKDF2 over the SHA-1 hex of password and salt', async () => {
    const sha = 'd4b5d8403f6c1d1c7975fb19cbbacf260cebecdf';
    const derivedKey = await pbkdf2Hex(sha, SALT, 10, 'sha256');
    const hash = { scheme: 'simple+pbkdf2' as const, prf: 'sha256', salt: SALT, iterations: 10, derivedKey };
    assert.equal(await verifyPasswordHash(hash, 'apple', limits), true);
    assert.equal(await verifyPasswordHash(hash, 'pear', limits), false);
  });

  test('an unknown PRF and iteration limits give CouchDB 403s', async () => {
    const base = parseAdminHash(formats[0]![1])!;
    await assert.rejects(verifyPasswordHash({ ...base, prf: 'md5' } as never, 'apple', limits), { status: 403, reason: 'PRF is invalid' });
    await assert.rejects(verifyPasswordHash(base, 'apple', { min: 11, max: 100 }), { status: 403, reason: 'Iteration count is too low for this server' });
    await assert.rejects(verifyPasswordHash(base, 'apple', { min: 1, max: 9 }), { status: 403, reason: 'Iteration count is too high for this server' });
  });
});
