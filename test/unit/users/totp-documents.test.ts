import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isCouchError } from '../../../src/errors/couch-error.js';
import type { JsonObject } from '../../../src/storage/storage.js';
import { credentialsFromDoc, filterUserRead } from '../../../src/users/user-documents.js';
import { validateUserDoc } from '../../../src/users/user-validation.js';

const KEY = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const ADMIN = { name: 'root', roles: ['_admin'] };

function doc(totp?: unknown): JsonObject {
  const body: Record<string, unknown> = {
    _id: 'org.couchdb.user:bob',
    _rev: '1-a',
    name: 'bob',
    type: 'user',
    roles: [],
    password_scheme: 'simple',
    salt: 'abc',
    password_sha: 'def',
  };
  if (totp !== undefined) body['totp'] = totp;
  return body as JsonObject;
}

function reasonOf(run: () => void): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!isCouchError(error)) throw error;
    assert.equal(error.status, 403);
    assert.equal(error.error, 'forbidden');
    return error.reason;
  }
}

describe('totp in _users writes', () => {
  test('absent, null or well-formed: accepted, for admins and for the owner', () => {
    for (const totp of [undefined, null, { key: KEY }, { key: KEY.toLowerCase(), algorithm: 'sha256', length: 7 }]) {
      assert.equal(reasonOf(() => validateUserDoc(doc(totp), undefined, ADMIN, true)), undefined, JSON.stringify(totp));
      assert.equal(reasonOf(() => validateUserDoc(doc(totp), doc(), { name: 'bob', roles: [] }, false)), undefined, JSON.stringify(totp));
    }
  });

  test('malformed: 403 forbidden with a reason naming the member', () => {
    const cases: Array<[unknown, string]> = [
      ['secret', 'totp must be an object.'],
      [{ key: '0000 1111' }, 'totp.key must be a base32 string.'],
      [{ key: KEY, algorithm: 'md5' }, 'totp.algorithm must be sha, sha256 or sha512.'],
      [{ key: KEY, length: 4 }, 'totp.length must be 6, 7 or 8.'],
    ];
    for (const [totp, reason] of cases) {
      assert.equal(reasonOf(() => validateUserDoc(doc(totp), undefined, ADMIN, true)), reason, JSON.stringify(totp));
    }
  });

  test('a delete does not look at totp', () => {
    assert.equal(reasonOf(() => validateUserDoc({ ...doc('junk'), _deleted: true }, doc(), ADMIN, true)), undefined);
  });
});

describe('totp in _users reads and credentials', () => {
  const stored = doc({ key: KEY, length: 8 });

  test('the owner and admins see it; others never, even when public_fields names it', () => {
    assert.deepEqual(filterUserRead(stored, { userCtx: { name: 'bob', roles: [] }, isAdmin: false }, []), stored);
    assert.deepEqual(filterUserRead(stored, { userCtx: ADMIN, isAdmin: true }, []), stored);
    const eve = { userCtx: { name: 'eve', roles: [] }, isAdmin: false };
    assert.deepEqual(filterUserRead(stored, eve, ['name', 'totp', ' totp ']), { _id: stored['_id'], _rev: stored['_rev'], name: 'bob' });
    assert.equal(filterUserRead(stored, eve, ['totp']), undefined, 'nothing else public: 404');
  });

  test('credentials carry the decoded settings; an unusable totp still marks the user (no code matches)', () => {
    const credentials = credentialsFromDoc(stored)!;
    assert.equal(credentials.hasTotp, true);
    assert.deepEqual(credentials.totp, { key: Buffer.from('12345678901234567890'), algorithm: 'sha', length: 8 });
    const broken = credentialsFromDoc(doc({ key: KEY, algorithm: 'md5' }))!;
    assert.equal(broken.hasTotp, true);
    assert.equal(broken.totp, undefined);
    assert.equal(credentialsFromDoc(doc(null))!.totp, undefined);
  });
});
