import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { extractRoles, parseRolesClaimPath, rolesFromValue } from '../../../../src/auth/jwt/roles.js';
import { badRequest, rejectsWith } from './fixtures.js';

const notFound = (reason: string): [number, string, string] => [404, 'not_found', reason];

describe('parseRolesClaimPath', () => {
  const cases: [string, string[]][] = [
    ['roles', ['roles']],
    ['a.b.c', ['a', 'b', 'c']],
    ['foo.bar\\.zonk.baz\\.buu.baa.baa\\.bee.roles', ['foo', 'bar.zonk', 'baz.buu', 'baa', 'baa.bee', 'roles']],
    ['\\.lead', ['.lead']],
    ['trail\\.', ['trail.']],
    ['a..b', ['a', '', 'b']],
    ['<<foo.bar', ['<<foo', 'bar']],
    ['123456', ['123456']],
  ];
  for (const [path, tokens] of cases) {
    test(`${path} → ${JSON.stringify(tokens)}`, () => {
      assert.deepEqual(parseRolesClaimPath(path), tokens);
    });
  }
});

// The claims of CouchDB's jwt_roles_claim_test.exs token (reference §14 items 48–51).
const COUCHDB_CLAIMS = {
  sub: '1234567890',
  my: { nested: { '_couchdb.roles': ['my_nested_couchdb.roles_1', 'my_nested_couchdb.roles_1'] } },
  '_couchdb.roles': ['_couchdb.roles_1', '_couchdb.roles_2'],
  'my._couchdb.roles': ['my._couchdb.roles_1', 'my._couchdb.roles_2'],
  foo: { 'bar.zonk': { 'baz.buu': { baa: { 'baa.bee': { roles: ['my_nested_role_1', 'my_nested_role_2'] } } } } },
};

describe('extractRoles', () => {
  test('default name: the top-level _couchdb.roles claim', () => {
    assert.deepEqual(extractRoles(COUCHDB_CLAIMS, { name: '_couchdb.roles' }), ['_couchdb.roles_1', '_couchdb.roles_2']);
  });

  test('roles_claim_name with dots names one top-level key', () => {
    assert.deepEqual(extractRoles(COUCHDB_CLAIMS, { name: 'my._couchdb.roles' }), [
      'my._couchdb.roles_1',
      'my._couchdb.roles_2',
    ]);
  });

  test('a missing roles_claim_name claim means no roles', () => {
    assert.deepEqual(extractRoles({ sub: 'x' }, { name: '_couchdb.roles' }), []);
  });

  test('roles_claim_name never reads Object.prototype', () => {
    assert.deepEqual(extractRoles({ sub: 'x' }, { name: 'constructor' }), []);
    assert.deepEqual(extractRoles({ sub: 'x' }, { name: '__proto__' }), []);
  });

  test('roles_claim_path walks nested keys with escaped dots and wins over the name', () => {
    const path = parseRolesClaimPath('foo.bar\\.zonk.baz\\.buu.baa.baa\\.bee.roles');
    assert.deepEqual(extractRoles(COUCHDB_CLAIMS, { name: 'my._couchdb.roles', path }), [
      'my_nested_role_1',
      'my_nested_role_2',
    ]);
  });

  test('roles_claim_path with bad input answers 404 missing json key', async () => {
    for (const [path, key] of [
      ['<<foo.bar\\.zonk.baz\\.buu.baa.baa\\.bee.roles', '<<foo'],
      ['foo.bar\\.zonk.baz\\.buu.baa.baa\\.bee.roles>>', 'roles>>'],
      ['123456', '123456'],
      ['foo.bar.zonk', 'bar'],
    ]) {
      await rejectsWith(
        () => extractRoles(COUCHDB_CLAIMS, { name: '_couchdb.roles', path: parseRolesClaimPath(path) }),
        ...notFound(`missing json key: ${key}`),
      );
    }
  });

  test('roles_claim_path through a non-object answers 404 json_mismatch', async () => {
    for (const claims of [{ a: 'text' }, { a: ['b'] }, { a: null }, { a: 7 }]) {
      await rejectsWith(
        () => extractRoles(claims, { name: 'x', path: ['a', 'b'] }),
        ...notFound('json_mismatch'),
      );
    }
  });

  test('roles_claim_path does not find inherited keys', async () => {
    await rejectsWith(
      () => extractRoles({ a: {} }, { name: 'x', path: ['a', 'toString'] }),
      ...notFound('missing json key: toString'),
    );
  });
});

describe('rolesFromValue', () => {
  test('an array of strings is kept as is', () => {
    assert.deepEqual(rolesFromValue(['a', 'b', ' c ']), ['a', 'b', ' c ']);
    assert.deepEqual(rolesFromValue([]), []);
  });

  test('a comma-separated string is split, parts trimmed, empty parts dropped', () => {
    assert.deepEqual(rolesFromValue('a,b'), ['a', 'b']);
    assert.deepEqual(rolesFromValue('my._couchdb_string.roles_1, my._couchdb_string.roles_2'), [
      'my._couchdb_string.roles_1',
      'my._couchdb_string.roles_2',
    ]);
    assert.deepEqual(rolesFromValue(' a ,, b ,'), ['a', 'b']);
    assert.deepEqual(rolesFromValue(''), []);
    assert.deepEqual(rolesFromValue('solo'), ['solo']);
  });

  test('an array with a non-string, or a number/object/null/boolean, is 400 Malformed token', async () => {
    for (const value of [['a', 1], [null], [['a']], 7, { a: 1 }, null, true]) {
      await rejectsWith(() => rolesFromValue(value), ...badRequest('Malformed token'));
    }
  });
});
