import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isDbAdmin, isDbMember, requireDbMember, requireServerAdmin } from '../../../src/identity/authorization.js';
import { defaultSecurity } from '../../../src/databases/security.js';

const anonymous = { name: null, roles: [] };
const bob = { name: 'bob', roles: ['staff'] };
const admin = { name: 'root', roles: ['_admin'] };

describe('authorization rules', () => {
  test('admin_only default: only server admins are members', () => {
    const security = defaultSecurity('admin_only');
    assert.equal(isDbMember(admin, security), true);
    assert.equal(isDbMember(bob, security), false);
    assert.equal(isDbMember(anonymous, security), false);
  });

  test('everyone / admin_local default: an empty security object is public', () => {
    assert.deepEqual(defaultSecurity('everyone'), {});
    assert.equal(isDbMember(anonymous, defaultSecurity('admin_local')), true);
  });

  test('members and admins match by name or by role; readers is the old name of members', () => {
    assert.equal(isDbMember(bob, { members: { names: ['bob'] } }), true);
    assert.equal(isDbMember(bob, { members: { roles: ['staff'] } }), true);
    assert.equal(isDbMember(bob, { readers: { names: ['bob'] } }), true);
    assert.equal(isDbMember(bob, { members: { names: ['alice'] } }), false);
    assert.equal(isDbAdmin(bob, { admins: { roles: ['staff'] } }), true);
    assert.equal(isDbMember(bob, { admins: { names: ['bob'] }, members: { names: ['alice'] } }), true, 'db admins are members');
  });

  test('malformed security groups grant nothing', () => {
    assert.equal(isDbMember(bob, { members: { names: 'bob' } as never, admins: { names: [] } }), true, 'no valid member list: public');
    assert.equal(isDbAdmin(bob, { admins: { names: 'bob' } as never }), false);
    assert.equal(isDbMember(bob, { members: { names: [7, 'alice'] } as never }), false);
  });

  test('anonymous non-member → 401, named non-member → 403, with CouchDB reasons', () => {
    const security = { members: { names: ['alice'] } };
    assert.throws(() => requireDbMember(anonymous, security), { status: 401, reason: 'You are not authorized to access this db.' });
    assert.throws(() => requireDbMember(bob, security), { status: 403, reason: 'You are not allowed to access this db.' });
  });

  test('server-admin checks answer 401 even for a named user', () => {
    assert.throws(() => requireServerAdmin(bob), { status: 401, error: 'unauthorized', reason: 'You are not a server admin.' });
    assert.doesNotThrow(() => requireServerAdmin(admin));
  });
});
