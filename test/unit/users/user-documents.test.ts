import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { UserCtx } from '../../../src/identity/user-ctx.js';
import { pbkdf2Hex, pbkdf2Queue, sha1Hex } from '../../../src/crypto/crypto.js';
import type { JsonObject } from '../../../src/storage/storage.js';
import { verifyPasswordHash } from '../../../src/users/password-hash.js';
import {
  USER_PREFIX,
  credentialsFromDoc,
  filterUserRead,
  needsHashUpgrade,
  prepareUserWrite,
  userNameFromId,
  type HashSettings,
  type UserCredentials,
  type WriterContext,
} from '../../../src/users/user-documents.js';

const SETTINGS: HashSettings = { scheme: 'pbkdf2', prf: 'sha256', iterations: 10, passwordRegexp: '' };
const LIMITS = { min: 1, max: 1000000000 };
const SALT = '1112283cf988a34f124200a050d308a1';
const HEX32 = /^[0-9a-f]{32}$/;

const writer = (name: string | null, roles: string[] = [], isAdmin = false): WriterContext => ({ userCtx: { name, roles }, isAdmin });
const SERVER_ADMIN = writer('admin', ['_admin'], true);
const DB_ADMIN = writer('dba', ['ops'], true);
const ANONYMOUS = writer(null);
const BOB = writer('bob');

/** A valid user doc with a few test-chosen members (trusted keys, so spreading is fine here). */
const userDoc = (name: string, members: JsonObject = {}): JsonObject => ({
  _id: USER_PREFIX + name,
  type: 'user',
  name,
  roles: [],
  ...members,
});
const stored = (name: string, members: JsonObject = {}): JsonObject =>
  userDoc(name, { _rev: '1-abc', password_scheme: 'pbkdf2', pbkdf2_prf: 'sha256', salt: SALT, iterations: 10, derived_key: 'ab', ...members });

const forbidden = (reason: string) => ({ name: 'CouchError', status: 403, error: 'forbidden', reason });
const MISSING = { name: 'CouchError', status: 404, error: 'not_found', reason: 'missing' };
const CANNOT_HASH = forbidden('Server cannot hash passwords at this time.');

describe('userNameFromId', () => {
  const cases: [string, string | undefined][] = [
    ['org.couchdb.user:bob', 'bob'],
    ['org.couchdb.user:', ''],
    ['org.couchdb.user:a:b', 'a:b'],
    ['org.apache.couchdb:w00x', undefined],
    ['_design/_auth', undefined],
  ];
  for (const [id, name] of cases) test(`${id} → ${String(name)}`, () => assert.equal(userNameFromId(id), name));
});

describe('validate_doc_update messages (§7.3, in order)', () => {
  // [title, doc, oldDoc, writer, expected reason or 'ok']
  const cases: [string, JsonObject, JsonObject | undefined, WriterContext, string][] = [
    ['1: anonymous delete of an existing doc', { _id: `${USER_PREFIX}bob`, _rev: '1-abc', _deleted: true }, stored('bob'), ANONYMOUS, 'Only admins may delete other user docs.'],
    ['1: db admin without _admin role deletes another doc', { _id: `${USER_PREFIX}bob`, _rev: '1-abc', _deleted: true }, stored('bob'), DB_ADMIN, 'Only admins may delete other user docs.'],
    ['1: anonymous delete of a doc without a name', { _id: `${USER_PREFIX}x`, _rev: '1-abc', _deleted: true }, { _id: `${USER_PREFIX}x`, _rev: '1-abc' }, ANONYMOUS, 'Only admins may delete other user docs.'],
    ['1: owner deletes own doc, skipping the other checks', { _id: `${USER_PREFIX}bob`, _rev: '1-abc', _deleted: true }, stored('bob'), BOB, 'ok'],
    ['1: server admin deletes', { _id: `${USER_PREFIX}bob`, _rev: '1-abc', _deleted: true }, stored('bob'), SERVER_ADMIN, 'ok'],
    ['2: type other (§14.4)', userDoc('bob', { type: 'other' }), undefined, SERVER_ADMIN, 'doc.type must be user'],
    ['2: type missing, before the name check', { _id: `${USER_PREFIX}bob`, roles: [] }, undefined, SERVER_ADMIN, 'doc.type must be user'],
    ['3: name missing', { _id: `${USER_PREFIX}bob`, type: 'user', roles: [] }, undefined, SERVER_ADMIN, 'doc.name is required'],
    ['3: name empty', userDoc('', {}), undefined, SERVER_ADMIN, 'doc.name is required'],
    ['3: name a number', userDoc('123', { name: 123 }), undefined, SERVER_ADMIN, 'doc.name is required'],
    ['3: name an array that would concatenate to the id', userDoc('bob', { name: ['bob'] }), undefined, SERVER_ADMIN, 'doc.name is required'],
    ['4: roles missing (§14.7)', { _id: `${USER_PREFIX}bob`, type: 'user', name: 'bob' }, undefined, SERVER_ADMIN, 'doc.roles must exist'],
    ['4: roles null', userDoc('bob', { roles: null }), undefined, SERVER_ADMIN, 'doc.roles must exist'],
    ['4: roles empty string', userDoc('bob', { roles: '' }), undefined, SERVER_ADMIN, 'doc.roles must exist'],
    ['4: roles a string (§14.5)', userDoc('bob', { roles: 'reader' }), undefined, SERVER_ADMIN, 'doc.roles must be an array'],
    ['4: roles an object', userDoc('bob', { roles: { 0: 'reader' } }), undefined, SERVER_ADMIN, 'doc.roles must be an array'],
    ['4: roles [12] (§14.6)', userDoc('bob', { roles: [12] }), undefined, SERVER_ADMIN, 'doc.roles can only contain strings'],
    ['4: roles with null', userDoc('bob', { roles: ['a', null] }), undefined, SERVER_ADMIN, 'doc.roles can only contain strings'],
    ['5: foreign id (§14.32)', userDoc('w00x', { _id: 'org.apache.couchdb:w00x' }), undefined, SERVER_ADMIN, 'Doc ID must be of the form org.couchdb.user:name'],
    ['5: id and name differ', userDoc('bob', { name: 'alice' }), undefined, SERVER_ADMIN, 'Doc ID must be of the form org.couchdb.user:name'],
    ['6: name changed on update', userDoc('bob'), stored('bob', { name: 'bobby' }), SERVER_ADMIN, 'Usernames can not be changed.'],
    ['7: password_sha without salt', userDoc('bob', { password_sha: 'abc' }), undefined, SERVER_ADMIN, 'Users with password_sha must have a salt.See /_utils/script/couch.js for example code.'],
    ['7: password_sha with empty salt', userDoc('bob', { password_sha: 'abc', salt: '' }), undefined, SERVER_ADMIN, 'Users with password_sha must have a salt.See /_utils/script/couch.js for example code.'],
    ['8: unknown scheme', userDoc('bob', { password_scheme: 'bcrypt' }), undefined, SERVER_ADMIN, 'Password scheme `bcrypt` not supported.'],
    ['8: scheme as a list is joined as JavaScript would', userDoc('bob', { password_scheme: ['pbkdf2', 'x'] }), undefined, SERVER_ADMIN, 'Password scheme `pbkdf2,x` not supported.'],
    ['8: scheme object with a toString member does not crash', userDoc('bob', { password_scheme: { toString: 1 } }), undefined, SERVER_ADMIN, 'Password scheme `[object Object]` not supported.'],
    ['8: simple+pbkdf2 is supported', userDoc('bob', { password_scheme: 'simple+pbkdf2' }), undefined, SERVER_ADMIN, 'ok'],
    ['9: pbkdf2 iterations a string', userDoc('bob', { password_scheme: 'pbkdf2', iterations: '10', derived_key: 'ab' }), undefined, SERVER_ADMIN, 'iterations must be a number.'],
    ['9: pbkdf2 derived_key missing', userDoc('bob', { password_scheme: 'pbkdf2', iterations: 10 }), undefined, SERVER_ADMIN, 'derived_key must be a string.'],
    ['10: anonymous update of an existing doc', userDoc('bob'), stored('bob'), ANONYMOUS, 'You may only update your own user document.'],
    ['10: owner changes roles (§14.36)', userDoc('bob', { roles: ['reader'] }), stored('bob'), BOB, 'Only _admin may edit roles'],
    ['10: owner drops a role', userDoc('bob', { roles: ['a'] }), stored('bob', { roles: ['a', 'b'] }), BOB, 'Only _admin may edit roles'],
    ['10: owner duplicates a role', userDoc('bob', { roles: ['a', 'a'] }), stored('bob', { roles: ['a'] }), BOB, 'Only _admin may edit roles'],
    ['10: owner reorders roles', userDoc('bob', { roles: ['b', 'a'] }), stored('bob', { roles: ['a', 'b'] }), BOB, 'ok'],
    ['10: owner keeps roles when the old doc had none', userDoc('bob'), stored('bob', { roles: null }), BOB, 'ok'],
    ['10: owner with a malformed old roles value', userDoc('bob', { roles: ['x'] }), stored('bob', { roles: 'x' }), BOB, 'Only _admin may edit roles'],
    ['10: anonymous signup with roles', userDoc('eve', { roles: ['reader'] }), undefined, ANONYMOUS, 'Only _admin may set roles'],
    ['10: anonymous signup without roles (§14.13)', userDoc('eve'), undefined, ANONYMOUS, 'ok'],
    ['10: db admin by role sets roles', userDoc('bob', { roles: ['reader'] }), stored('bob'), DB_ADMIN, 'ok'],
    ['11: admin sets _bar (§14.37)', userDoc('bob', { roles: ['_bar'] }), stored('bob'), SERVER_ADMIN, 'No system roles (starting with underscore) in users db.'],
    ['11: admin sets _admin', userDoc('bob', { roles: ['reader', '_admin'] }), undefined, SERVER_ADMIN, 'No system roles (starting with underscore) in users db.'],
    ['11: _metrics is allowed', userDoc('bob', { roles: ['_metrics'] }), undefined, SERVER_ADMIN, 'ok'],
    ['12: name _why (§14.31)', userDoc('_why'), undefined, SERVER_ADMIN, 'Username may not start with underscore.'],
    ['13: name joe:erlang (§14.8)', userDoc('joe:erlang'), undefined, SERVER_ADMIN, 'Character `:` is not allowed in usernames.'],
    ['13: anonymous signup joe:erlang', userDoc('joe:erlang'), undefined, ANONYMOUS, 'Character `:` is not allowed in usernames.'],
  ];
  for (const [title, doc, oldDoc, who, expected] of cases) {
    test(`${title} → ${expected}`, async () => {
      const write = prepareUserWrite(doc, oldDoc, who, SETTINGS);
      if (expected === 'ok') assert.equal(await write, doc);
      else await assert.rejects(write, forbidden(expected));
    });
  }

  test('the role comparison sorts copies: neither document is reordered', async () => {
    const oldDoc = stored('bob', { roles: ['b', 'c', 'a'] });
    const result = await prepareUserWrite(userDoc('bob', { roles: ['c', 'a', 'b'], password: 'pw' }), oldDoc, BOB, SETTINGS);
    assert.deepEqual(result['roles'], ['c', 'a', 'b']);
    assert.deepEqual(oldDoc['roles'], ['b', 'c', 'a']);
  });

  test('CouchDB couch_auth_cache_tests VDU matrix (§14.80), as _admin named foo', async () => {
    const make = ([roles, type]: [string, string]): JsonObject =>
      Object.fromEntries([
        ['_id', 'org.couchdb.user:foo'],
        ['_rev', '1-281c81adb1bf10927a6160f246dc0468'],
        ['name', 'foo'],
        ['password_scheme', 'simple'],
        ['salt', '00000000000000000000000000000000'],
        ['password_sha', '111111111111111111111111111111111111'],
        ...(type === 'missing' ? [] : [['type', type]]),
        ...(roles === 'missing' ? [] : [['roles', ['custom']]]),
      ]);
    const docs: [string, string][] = [];
    for (const roles of ['missing', 'custom']) for (const type of ['missing', 'user', 'other']) docs.push([roles, type]);
    const expected = (next: [string, string]) =>
      next[1] !== 'user' ? 'doc.type must be user' : next[0] === 'missing' ? 'doc.roles must exist' : 'ok';
    const foo = writer('foo', ['_admin'], true);
    let checked = 0;
    for (const old of docs) {
      for (const next of docs) {
        const write = prepareUserWrite(make(next), make(old), foo, SETTINGS);
        if (expected(next) === 'ok') await write;
        else await assert.rejects(write, forbidden(expected(next)), `${old} → ${next}`);
        checked += 1;
      }
    }
    assert.equal(checked, 36);
  });
});

describe('the access rule of before_doc_update', () => {
  test('a named non-admin writing another user doc gets 404 missing (§14.36)', async () => {
    await assert.rejects(prepareUserWrite(userDoc('alice'), stored('alice'), BOB, SETTINGS), MISSING);
  });

  test('a named non-admin deleting another user doc gets 404 missing (§14.33)', async () => {
    const deletion = { _id: `${USER_PREFIX}alice`, _rev: '1-abc', _deleted: true };
    await assert.rejects(prepareUserWrite(deletion, stored('alice'), BOB, SETTINGS), MISSING);
  });

  test('a named non-admin creating a doc for another name gets 404 missing', async () => {
    await assert.rejects(prepareUserWrite(userDoc('alice'), undefined, BOB, SETTINGS), MISSING);
  });

  test('the 404 comes before hashing errors', async () => {
    await assert.rejects(prepareUserWrite(userDoc('alice', { password: 123 }), undefined, BOB, SETTINGS), MISSING);
    const unparsable = { ...SETTINGS, passwordRegexp: '[{' };
    await assert.rejects(prepareUserWrite(userDoc('alice', { password: 'pw' }), undefined, BOB, unparsable), MISSING);
  });

  test('a db admin may change another user password (§14.28)', async () => {
    const result = await prepareUserWrite(userDoc('alice', { password: 'new' }), stored('alice'), DB_ADMIN, SETTINGS);
    assert.equal(typeof result['derived_key'], 'string');
  });

  test('a named non-admin writing a design doc gets 404; anonymous gets 401; admins skip validation', async () => {
    const ddoc = { _id: '_design/x', views: {} };
    await assert.rejects(prepareUserWrite(ddoc, undefined, BOB, SETTINGS), MISSING);
    await assert.rejects(prepareUserWrite(ddoc, undefined, ANONYMOUS, SETTINGS), {
      status: 401,
      error: 'unauthorized',
      reason: 'You are not a db or server admin.',
    });
    assert.equal(await prepareUserWrite(ddoc, undefined, DB_ADMIN, SETTINGS), ddoc);
  });

  test('_local documents get no hook at all', async () => {
    const local = { _id: '_local/x', password: 123 };
    assert.equal(await prepareUserWrite(local, undefined, BOB, SETTINGS), local);
  });
});

describe('password hashing (§7.2)', () => {
  test('pbkdf2: fields removed, then prepended in CouchDB order; the key verifies', async () => {
    const doc: JsonObject = {
      _id: `${USER_PREFIX}bob`,
      _rev: '1-abc',
      type: 'user',
      salt: 'old',
      name: 'bob',
      password_sha: 'x',
      derived_key: 'y',
      iterations: 5,
      pbkdf2_prf: 'sha',
      password_scheme: 'simple',
      preserve_salt: false,
      roles: [],
      password: 'apple',
      city: 'Oslo',
    };
    const result = await prepareUserWrite(doc, stored('bob'), BOB, SETTINGS);
    assert.deepEqual(Object.keys(result), [
      '_id',
      '_rev',
      'password_scheme',
      'pbkdf2_prf',
      'salt',
      'iterations',
      'derived_key',
      'type',
      'name',
      'roles',
      'city',
    ]);
    assert.equal(result['password_scheme'], 'pbkdf2');
    assert.equal(result['pbkdf2_prf'], 'sha256');
    assert.equal(result['iterations'], 10);
    assert.match(result['salt'] as string, HEX32);
    assert.notEqual(result['salt'], 'old');
    assert.equal(result['derived_key'], await pbkdf2Hex('apple', result['salt'] as string, 10, 'sha256'));
    assert.equal(doc['password'], 'apple', 'the incoming object is not modified');
  });

  const lengths: [string, string, number][] = [
    ['sha', 'sha1', 40],
    ['sha224', 'sha224', 56],
    ['sha256', 'sha256', 64],
    ['sha384', 'sha384', 96],
    ['sha512', 'sha512', 128],
  ];
  for (const [prf, digest, length] of lengths) {
    test(`pbkdf2_prf ${prf}: derived_key has ${length} hex chars and verifies (§14.20)`, async () => {
      const result = await prepareUserWrite(userDoc('bob', { password: 'pw' }), undefined, ANONYMOUS, { ...SETTINGS, prf });
      assert.equal(result['pbkdf2_prf'], prf);
      assert.match(result['derived_key'] as string, new RegExp(`^[0-9a-f]{${length}}$`));
      assert.equal(result['derived_key'], await pbkdf2Hex('pw', result['salt'] as string, 10, digest));
    });
  }

  test('anonymous signup stores no password, a 64-char derived_key and a 32-char salt (§14.13–14)', async () => {
    const result = await prepareUserWrite(userDoc('tom', { password: 'secret' }), undefined, ANONYMOUS, SETTINGS);
    assert.equal(Object.hasOwn(result, 'password'), false);
    assert.match(result['derived_key'] as string, /^[0-9a-f]{64}$/);
    assert.match(result['salt'] as string, HEX32);
  });

  test('an owner password change gets a new salt and key with the configured iterations and prf (§14.19)', async () => {
    const first = await prepareUserWrite(userDoc('bob', { password: 'one' }), undefined, ANONYMOUS, SETTINGS);
    const old = Object.fromEntries([...Object.entries(first), ['_rev', '1-abc']]) as JsonObject;
    const change = Object.fromEntries([...Object.entries(old), ['password', 'two']]) as JsonObject;
    const settings = { ...SETTINGS, iterations: 12 };
    const second = await prepareUserWrite(change, old, BOB, settings);
    assert.notEqual(second['salt'], first['salt']);
    assert.notEqual(second['derived_key'], first['derived_key']);
    assert.equal(second['iterations'], 12);
    assert.equal(second['pbkdf2_prf'], 'sha256');
    const credentials = credentialsFromDoc(second)!;
    assert.equal(await verifyPasswordHash(credentials.hash, 'two', LIMITS), true);
    assert.equal(await verifyPasswordHash(credentials.hash, 'one', LIMITS), false);
  });

  test('a password containing a colon is hashed like any other (§14.9)', async () => {
    const result = await prepareUserWrite(userDoc('foo@example.org', { password: ':bar' }), undefined, ANONYMOUS, SETTINGS);
    assert.equal(await verifyPasswordHash(credentialsFromDoc(result)!.hash, ':bar', LIMITS), true);
  });

  test('every write draws a new salt', async () => {
    const one = await prepareUserWrite(userDoc('bob', { password: 'pw' }), undefined, ANONYMOUS, SETTINGS);
    const two = await prepareUserWrite(userDoc('bob', { password: 'pw' }), undefined, ANONYMOUS, SETTINGS);
    assert.notEqual(one['salt'], two['salt']);
  });

  const preserve: [string, JsonObject, boolean][] = [
    ['preserve_salt true with a string salt keeps it', { preserve_salt: true, salt: SALT }, true],
    ['preserve_salt true without a salt draws one', { preserve_salt: true }, false],
    ['preserve_salt "true" is not true', { preserve_salt: 'true', salt: SALT }, false],
    ['preserve_salt true with a numeric salt draws one', { preserve_salt: true, salt: 1234 }, false],
    ['a salt without preserve_salt is replaced', { salt: SALT }, false],
  ];
  for (const [title, members, kept] of preserve) {
    test(title, async () => {
      const result = await prepareUserWrite(userDoc('bob', { password: 'pw', ...members }), undefined, SERVER_ADMIN, SETTINGS);
      assert.equal(result['salt'] === SALT, kept);
      assert.match(result['salt'] as string, kept ? /^1112283c/ : HEX32);
      assert.equal(Object.hasOwn(result, 'preserve_salt'), false);
      assert.equal(result['derived_key'], await pbkdf2Hex('pw', result['salt'] as string, 10, 'sha256'));
    });
  }

  test('hash upgrade after an iterations change: new iterations and key, same salt (§14.21)', async () => {
    const old = await prepareUserWrite(userDoc('bob', { password: 'pw' }), undefined, ANONYMOUS, SETTINGS);
    const oldDoc = Object.fromEntries([...Object.entries(old), ['_rev', '1-abc']]) as JsonObject;
    const settings = { ...SETTINGS, iterations: 20 };
    const credentials = credentialsFromDoc(oldDoc)!;
    assert.equal(needsHashUpgrade(credentials, settings), true);
    const rewrite = Object.fromEntries([...Object.entries(oldDoc), ['password', 'pw'], ['preserve_salt', true]]) as JsonObject;
    const upgraded = await prepareUserWrite(rewrite, oldDoc, writer(null, ['_admin'], true), settings);
    assert.equal(upgraded['salt'], old['salt']);
    assert.equal(upgraded['iterations'], 20);
    assert.notEqual(upgraded['derived_key'], old['derived_key']);
    assert.equal(needsHashUpgrade(credentialsFromDoc(upgraded)!, settings), false);
  });

  test('simple scheme: password_scheme, salt, password_sha = sha1(password + salt)', async () => {
    const doc = userDoc('bob', { password: 'apple', derived_key: 'x', iterations: 3 });
    const result = await prepareUserWrite(doc, undefined, ANONYMOUS, { ...SETTINGS, scheme: 'simple' });
    assert.deepEqual(Object.keys(result), ['_id', 'password_scheme', 'salt', 'password_sha', 'type', 'name', 'roles']);
    assert.equal(result['password_scheme'], 'simple');
    assert.equal(result['password_sha'], sha1Hex(`apple${result['salt'] as string}`));
    assert.equal(await verifyPasswordHash(credentialsFromDoc(result)!.hash, 'apple', LIMITS), true);
  });

  test('null or absent password: stored unchanged, whatever the settings', async () => {
    const broken = { scheme: 'bcrypt', prf: 'nope', iterations: 0, passwordRegexp: '[{' };
    const withNull = userDoc('bob', { password: null });
    assert.equal(await prepareUserWrite(withNull, undefined, ANONYMOUS, broken), withNull);
    assert.equal(withNull['password'], null);
    const without = userDoc('bob');
    assert.equal(await prepareUserWrite(without, undefined, ANONYMOUS, broken), without);
  });

  const refusals: [string, JsonObject, Partial<HashSettings>, object][] = [
    ['another scheme', { password: 'pw' }, { scheme: 'bcrypt' }, CANNOT_HASH],
    ['an unknown PRF', { password: 'pw' }, { prf: 'md5' }, CANNOT_HASH],
    ['zero iterations', { password: 'pw' }, { iterations: 0 }, CANNOT_HASH],
    ['fractional iterations', { password: 'pw' }, { iterations: 1.5 }, CANNOT_HASH],
    ['password 123 (§14.70)', { password: 123 }, {}, forbidden("Password value of '123' is invalid.")],
    ['password true', { password: true }, {}, forbidden("Password value of 'true' is invalid.")],
    ['password object', { password: { a: 'b' } }, {}, forbidden('Password value of \'{"a":"b"}\' is invalid.')],
    ['password number under the simple scheme', { password: 5 }, { scheme: 'simple' }, forbidden("Password value of '5' is invalid.")],
  ];
  for (const [title, members, overrides, expected] of refusals) {
    test(`refuses ${title}`, async () => {
      await assert.rejects(prepareUserWrite(userDoc('bob', members), undefined, SERVER_ADMIN, { ...SETTINGS, ...overrides }), expected);
    });
  }

  test('hashing runs before validation: a password replaces stale hash fields', async () => {
    const doc = userDoc('bob', { password: 'pw', password_scheme: 'bcrypt', password_sha: 'abc' });
    const result = await prepareUserWrite(doc, undefined, ANONYMOUS, SETTINGS);
    assert.equal(result['password_scheme'], 'pbkdf2');
    assert.equal(Object.hasOwn(result, 'password_sha'), false);
  });

  test('a member named __proto__ stays an ordinary member', async () => {
    const doc = JSON.parse(`{"_id":"${USER_PREFIX}bob","type":"user","name":"bob","roles":[],"__proto__":{"polluted":true},"password":"pw"}`) as JsonObject;
    const result = await prepareUserWrite(doc, undefined, ANONYMOUS, SETTINGS);
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(result, '__proto__')?.value, { polluted: true });
    assert.equal((result as Record<string, unknown>)['polluted'], undefined);
  });
});

describe('PBKDF2 cost of _users writes (security issue item 8)', () => {
  const derivations = () => pbkdf2Queue.stats.completed;

  test('a write refused by validation costs no PBKDF2: the document is validated before its key is derived', async () => {
    const before = derivations();
    const refusals = [
      prepareUserWrite(userDoc('bob', { password: 'pw', roles: ['boss'] }), undefined, ANONYMOUS, SETTINGS),
      prepareUserWrite(userDoc('bob', { password: 'pw', type: 'robot' }), undefined, ANONYMOUS, SETTINGS),
      prepareUserWrite({ ...userDoc('bob', { password: 'pw' }), _id: `${USER_PREFIX}other` }, undefined, ANONYMOUS, SETTINGS),
      prepareUserWrite({ _id: '_design/x', password: 'pw' }, undefined, ANONYMOUS, SETTINGS),
    ];
    for (const refusal of refusals) await assert.rejects(refusal, { name: 'CouchError' });
    assert.equal(derivations(), before);
    await prepareUserWrite(userDoc('bob', { password: 'pw' }), undefined, ANONYMOUS, SETTINGS);
    assert.equal(derivations(), before + 1, 'an accepted write derives its key once');
  });

  test('the stored object is the one validated, its derived key filled in', async () => {
    const result = await prepareUserWrite(userDoc('bob', { password: 'apple' }), undefined, ANONYMOUS, SETTINGS);
    assert.deepEqual(Object.keys(result), ['_id', 'password_scheme', 'pbkdf2_prf', 'salt', 'iterations', 'derived_key', 'type', 'name', 'roles']);
    assert.equal(result['derived_key'], await pbkdf2Hex('apple', result['salt'] as string, 10, 'sha256'));
  });

  test('a non-admin may not store a hash of their own with more than max_iterations (1e9 used to pass)', async () => {
    const own = (iterations: number, scheme = 'pbkdf2') =>
      userDoc('bob', { _rev: '1-abc', password_scheme: scheme, pbkdf2_prf: 'sha256', salt: SALT, iterations, derived_key: 'ab' });
    const settings = { ...SETTINGS, maxIterations: 6000000 };
    for (const scheme of ['pbkdf2', 'simple+pbkdf2']) {
      await assert.rejects(prepareUserWrite(own(1000000000, scheme), stored('bob'), BOB, settings), forbidden('Iteration count is too high for this server'), scheme);
      await assert.rejects(prepareUserWrite(own(6000001, scheme), stored('bob'), BOB, settings), forbidden('Iteration count is too high for this server'), scheme);
      assert.equal((await prepareUserWrite(own(6000000, scheme), stored('bob'), BOB, settings))['iterations'], 6000000);
    }
    await assert.rejects(prepareUserWrite(own(6000001), undefined, ANONYMOUS, settings), forbidden('Iteration count is too high for this server'));
    assert.equal((await prepareUserWrite(own(1000000000), stored('bob'), DB_ADMIN, settings))['iterations'], 1000000000, 'admins may');
  });

  test('without maxIterations in the settings the default limit (10 × 600000) applies', async () => {
    const doc = userDoc('bob', { _rev: '1-abc', password_scheme: 'pbkdf2', salt: SALT, iterations: 6000001, derived_key: 'ab' });
    await assert.rejects(prepareUserWrite(doc, stored('bob'), BOB, SETTINGS), forbidden('Iteration count is too high for this server'));
  });
});

describe('password_regexp on write (§7.2, §14.10–12)', () => {
  const suite = { ...SETTINGS, passwordRegexp: '[{".{10,}"}, {"[A-Z]+", "Requirement 2."}, {"[a-z]+", ""}, {"\\\\d+", "Req 4."}, "[!.,()]+"]' };
  const notConform = (suffix: string) => ({ status: 400, error: 'bad_request', reason: `Password does not conform to requirements.${suffix}` });
  const cases: [string, object | 'ok'][] = [
    ['funnybone', notConform('')],
    ['funnnnnybone', notConform(' Requirement 2.')],
    ['FUNNNNNYBONE', notConform('')],
    ['funnnnnyBONE', notConform(' Req 4.')],
    ['funnnnnyB0N3', notConform('')],
    ['funnnnnyB0N3!', 'ok'],
  ];
  for (const [password, expected] of cases) {
    test(`password ${password}`, async () => {
      const write = prepareUserWrite(userDoc('jchris@apache.org', { password }), undefined, SERVER_ADMIN, suite);
      if (expected === 'ok') assert.equal(typeof (await write)['derived_key'], 'string');
      else await assert.rejects(write, expected);
    });
  }

  test('the 400 comes before the validation function', async () => {
    const write = prepareUserWrite(userDoc('bob', { password: 'short', type: 'other' }), undefined, SERVER_ADMIN, suite);
    await assert.rejects(write, notConform(''));
  });

  for (const setting of ['{{".{10,}"}}', '[{".{10,}"]', '["("]']) {
    test(`unparsable or non-list setting ${setting} → 403`, async () => {
      const write = prepareUserWrite(userDoc('joe_erlang', { password: 'querty' }), undefined, SERVER_ADMIN, { ...SETTINGS, passwordRegexp: setting });
      await assert.rejects(write, CANNOT_HASH);
    });
  }
});

describe('duplicate JSON keys (CVE-2017-12635, §7.7)', () => {
  const body = (first: string, second: string, password = ',"password":"pw"') =>
    `{"_id":"${USER_PREFIX}eve","type":"user","name":"eve","roles":${first}${password},"roles":${second}}`;
  const attempts: [string, string][] = [];
  for (const role of ['"_admin"', '"reader"']) {
    attempts.push([`[${role}]`, '[]'], ['[]', `[${role}]`]);
  }
  const writers: [string, WriterContext, JsonObject | undefined][] = [
    ['anonymous signup', ANONYMOUS, undefined],
    ['owner update', writer('eve'), stored('eve')],
  ];

  test('a non-admin never ends up with a stored role, whichever duplicate comes last', async () => {
    let accepted = 0;
    let refused = 0;
    for (const [who, ctx, oldDoc] of writers) {
      for (const [first, second] of attempts) {
        for (const password of [',"password":"pw"', '']) {
          const text = body(first, second, password);
          const parsed = JSON.parse(text) as JsonObject;
          try {
            const result = await prepareUserWrite(parsed, oldDoc, ctx, SETTINGS);
            accepted += 1;
            assert.deepEqual(result['roles'], [], `${who}: ${text}`);
            // What was validated is what is stored: the very same roles array.
            assert.equal(result['roles'], parsed['roles']);
            assert.equal(JSON.stringify(result).match(/"roles"/g)?.length, 1);
          } catch (error) {
            refused += 1;
            const reason = oldDoc === undefined ? 'Only _admin may set roles' : 'Only _admin may edit roles';
            assert.deepEqual({ status: (error as { status: number }).status, reason: (error as { reason: string }).reason }, { status: 403, reason }, `${who}: ${text}`);
          }
        }
      }
    }
    assert.equal(accepted, 8);
    assert.equal(refused, 8);
  });

  test('an admin is still refused _admin whichever duplicate comes last', async () => {
    const parsed = JSON.parse(body('[]', '["_admin"]')) as JsonObject;
    await assert.rejects(prepareUserWrite(parsed, undefined, SERVER_ADMIN, SETTINGS), forbidden('No system roles (starting with underscore) in users db.'));
  });
});

describe('filterUserRead (§7.4)', () => {
  const doc = stored('bob', { city: 'Oslo', roles: ['reader'] });
  const reader = (name: string | null, isAdmin = false): { userCtx: UserCtx; isAdmin: boolean } => ({ userCtx: { name, roles: [] }, isAdmin });

  const cases: [string, { userCtx: UserCtx; isAdmin: boolean }, string[], JsonObject | 'same' | undefined][] = [
    ['server or db admin sees everything', reader('dba', true), [], 'same'],
    ['the owner sees everything, hash included', reader('bob'), [], 'same'],
    ['another user sees nothing by default (§14.22)', reader('alice'), [], undefined],
    ['anonymous sees nothing by default (§14.15)', reader(null), [], undefined],
    ['public fields are shown in doc order', reader('alice'), ['city', 'name'], { _id: `${USER_PREFIX}bob`, _rev: '1-abc', name: 'bob', city: 'Oslo' }],
    ['public fields are trimmed', reader(null), [' name '], { _id: `${USER_PREFIX}bob`, _rev: '1-abc', name: 'bob' }],
    ['a public field the doc lacks, alone, leaves nothing', reader('alice'), ['email'], undefined],
    ['_id and _rev alone are nothing', reader('alice'), ['_id', '_rev'], undefined],
  ];
  for (const [title, who, fields, expected] of cases) {
    test(title, () => {
      const result = filterUserRead(doc, who, fields);
      if (expected === 'same') assert.equal(result, doc);
      else assert.deepEqual(result, expected);
    });
  }

  test('public fields keep the order of the document', () => {
    assert.deepEqual(Object.keys(filterUserRead(doc, reader('alice'), ['city', 'name'])!), ['_id', 'name', '_rev', 'city']);
  });

  test('secret members are never public to others', () => {
    const result = filterUserRead(doc, reader('alice'), ['name']);
    assert.equal(Object.hasOwn(result!, 'derived_key'), false);
    assert.equal(Object.hasOwn(result!, 'salt'), false);
  });

  test('anonymous is not the owner of a doc without a user id', () => {
    assert.equal(filterUserRead({ _id: 'other', _rev: '1-abc', secret: 1 }, reader(null), []), undefined);
  });

  test('design docs: admins only (403 for others)', () => {
    const ddoc = { _id: '_design/x', _rev: '1-abc', views: {} };
    assert.equal(filterUserRead(ddoc, reader('dba', true), []), ddoc);
    assert.throws(() => filterUserRead(ddoc, reader('bob'), ['views']), forbidden('Only administrators can view design docs in the users database.'));
  });
});

describe('credentialsFromDoc', () => {
  const base = { _id: `${USER_PREFIX}bob`, _rev: '2-def', type: 'user', name: 'bob', roles: ['reader'] };
  const doc = (members: JsonObject): JsonObject => ({ ...base, ...members });
  const SHA1_KEY = 'e579375db0e0c6a6fc79cd9e36a36859f71575c3';
  const SHA256_KEY = '897e67c09d4a1fb1a8fd499c9a569904fe9dc85fbbfb45f3f486fcf0bd3fa423';
  const SIMPLE_SHA = 'd4b5d8403f6c1d1c7975fb19cbbacf260cebecdf';

  const usable: [string, JsonObject, UserCredentials['hash']][] = [
    ['pbkdf2 sha256', { password_scheme: 'pbkdf2', pbkdf2_prf: 'sha256', salt: SALT, iterations: 10, derived_key: SHA256_KEY }, { scheme: 'pbkdf2', prf: 'sha256', salt: SALT, iterations: 10, derivedKey: SHA256_KEY }],
    ['pbkdf2 without pbkdf2_prf is sha', { password_scheme: 'pbkdf2', salt: SALT, iterations: 10, derived_key: SHA1_KEY }, { scheme: 'pbkdf2', prf: 'sha', salt: SALT, iterations: 10, derivedKey: SHA1_KEY }],
    ['pbkdf2 without iterations is 10000', { password_scheme: 'pbkdf2', pbkdf2_prf: 'sha256', salt: SALT, derived_key: SHA256_KEY }, { scheme: 'pbkdf2', prf: 'sha256', salt: SALT, iterations: 10000, derivedKey: SHA256_KEY }],
    ['simple', { password_scheme: 'simple', salt: SALT, password_sha: SIMPLE_SHA }, { scheme: 'simple', salt: SALT, passwordSha: SIMPLE_SHA }],
    ['no scheme is simple', { salt: SALT, password_sha: SIMPLE_SHA }, { scheme: 'simple', salt: SALT, passwordSha: SIMPLE_SHA }],
    ['simple+pbkdf2', { password_scheme: 'simple+pbkdf2', pbkdf2_prf: 'sha256', salt: SALT, iterations: 10, derived_key: 'ab' }, { scheme: 'simple+pbkdf2', prf: 'sha256', salt: SALT, iterations: 10, derivedKey: 'ab' }],
  ];
  for (const [title, members, hash] of usable) {
    test(`usable: ${title}`, () => {
      assert.deepEqual(credentialsFromDoc(doc(members)), { name: 'bob', roles: ['reader'], hash, hasTotp: false, rev: '2-def' });
    });
  }

  test('the §2.5 vectors verify apple through the parsed hashes', async () => {
    for (const [title, members] of usable.filter(([title]) => !title.includes('10000') && title !== 'simple+pbkdf2')) {
      const { hash } = credentialsFromDoc(doc(members))!;
      assert.equal(await verifyPasswordHash(hash, 'apple', LIMITS), true, title);
      assert.equal(await verifyPasswordHash(hash, 'pear', LIMITS), false, title);
    }
  });

  test('simple+pbkdf2 derives from the hex SHA-1 of password and salt', async () => {
    const key = await pbkdf2Hex(sha1Hex(`apple${SALT}`), SALT, 10, 'sha256');
    const { hash } = credentialsFromDoc(doc({ password_scheme: 'simple+pbkdf2', pbkdf2_prf: 'sha256', salt: SALT, iterations: 10, derived_key: key }))!;
    assert.equal(await verifyPasswordHash(hash, 'apple', LIMITS), true);
  });

  const unusable: [string, JsonObject][] = [
    ['no hash at all', {}],
    ['pbkdf2 without derived_key', { password_scheme: 'pbkdf2', salt: SALT, iterations: 10 }],
    ['pbkdf2 without salt', { password_scheme: 'pbkdf2', iterations: 10, derived_key: SHA1_KEY }],
    ['pbkdf2 with fractional iterations', { password_scheme: 'pbkdf2', salt: SALT, iterations: 10.5, derived_key: SHA1_KEY }],
    ['pbkdf2 with string iterations', { password_scheme: 'pbkdf2', salt: SALT, iterations: '10', derived_key: SHA1_KEY }],
    ['pbkdf2 with a numeric prf', { password_scheme: 'pbkdf2', pbkdf2_prf: 256, salt: SALT, iterations: 10, derived_key: SHA1_KEY }],
    ['simple without salt', { password_scheme: 'simple', password_sha: SIMPLE_SHA }],
    ['simple without password_sha', { password_scheme: 'simple', salt: SALT }],
    ['unknown scheme', { password_scheme: 'bcrypt', salt: SALT, derived_key: SHA1_KEY }],
    ['non-string scheme', { password_scheme: 1, salt: SALT, password_sha: SIMPLE_SHA }],
    ['only a plaintext password', { password: 'apple' }],
  ];
  for (const [title, members] of unusable) {
    test(`unusable: ${title}`, () => assert.equal(credentialsFromDoc(doc(members)), undefined));
  }

  const hashMembers = { salt: SALT, password_sha: SIMPLE_SHA };
  test('roles keep only strings; a non-list is no roles', () => {
    assert.deepEqual(credentialsFromDoc(doc({ ...hashMembers, roles: ['a', 1, null, 'b'] }))!.roles, ['a', 'b']);
    assert.deepEqual(credentialsFromDoc(doc({ ...hashMembers, roles: 'a' }))!.roles, []);
  });

  test('hasTotp only for a totp object', () => {
    assert.equal(credentialsFromDoc(doc({ ...hashMembers, totp: { key: 'x' } }))!.hasTotp, true);
    assert.equal(credentialsFromDoc(doc({ ...hashMembers, totp: 'x' }))!.hasTotp, false);
    assert.equal(credentialsFromDoc(doc({ ...hashMembers, totp: null }))!.hasTotp, false);
  });

  test('name falls back to the id; rev only when present', () => {
    const credentials = credentialsFromDoc({ _id: `${USER_PREFIX}carol`, ...hashMembers })!;
    assert.equal(credentials.name, 'carol');
    assert.equal(Object.hasOwn(credentials, 'rev'), false);
  });

  test('members inherited from a polluted Object.prototype are not read', async () => {
    const bare: JsonObject = { _id: `${USER_PREFIX}bob`, salt: SALT };
    const signup = userDoc('bob');
    Object.defineProperty(Object.prototype, 'password_sha', { value: SIMPLE_SHA, configurable: true, writable: true });
    Object.defineProperty(Object.prototype, 'password', { value: 'inherited', configurable: true, writable: true });
    let credentials: UserCredentials | undefined;
    let written: JsonObject;
    try {
      credentials = credentialsFromDoc(bare);
      written = await prepareUserWrite(signup, undefined, ANONYMOUS, SETTINGS);
    } finally {
      delete (Object.prototype as Record<string, unknown>)['password_sha'];
      delete (Object.prototype as Record<string, unknown>)['password'];
    }
    assert.equal(credentials, undefined);
    assert.equal(written, signup);
  });
});

describe('needsHashUpgrade (§8.3)', () => {
  const credentials = (hash: UserCredentials['hash']): UserCredentials => ({ name: 'bob', roles: [], hash, hasTotp: false, rev: '1-a' });
  const simple = credentials({ scheme: 'simple', salt: SALT, passwordSha: 'x' });
  const pbkdf2 = (prf: string, iterations: number) => credentials({ scheme: 'pbkdf2', salt: SALT, derivedKey: 'x', prf, iterations });
  const mixed = credentials({ scheme: 'simple+pbkdf2', salt: SALT, derivedKey: 'x', prf: 'sha256', iterations: 600000 });
  const config = (scheme: string, prf = 'sha256', iterations = 600000): HashSettings => ({ scheme, prf, iterations, passwordRegexp: '' });

  const cases: [string, UserCredentials, HashSettings, boolean][] = [
    ['simple stored, simple configured', simple, config('simple'), false],
    ['simple stored, pbkdf2 configured', simple, config('pbkdf2'), true],
    ['pbkdf2 equal prf and iterations', pbkdf2('sha256', 600000), config('pbkdf2'), false],
    ['pbkdf2 fewer iterations', pbkdf2('sha256', 10), config('pbkdf2'), true],
    ['pbkdf2 more iterations', pbkdf2('sha256', 700000), config('pbkdf2'), true],
    ['pbkdf2 other prf', pbkdf2('sha512', 600000), config('pbkdf2'), true],
    ['pbkdf2 stored without prf (sha), sha256 configured', credentialsFromDoc({ _id: `${USER_PREFIX}bob`, password_scheme: 'pbkdf2', salt: SALT, iterations: 600000, derived_key: 'x' })!, config('pbkdf2'), true],
    ['pbkdf2 stored without prf (sha), sha configured', credentialsFromDoc({ _id: `${USER_PREFIX}bob`, password_scheme: 'pbkdf2', salt: SALT, iterations: 600000, derived_key: 'x' })!, config('pbkdf2', 'sha'), false],
    ['simple+pbkdf2 stored, pbkdf2 configured', mixed, config('pbkdf2'), true],
    ['simple+pbkdf2 stored, simple configured', mixed, config('simple'), true],
    ['pbkdf2 stored, simple configured', pbkdf2('sha256', 600000), config('simple'), true],
  ];
  for (const [title, current, settings, expected] of cases) {
    test(`${title} → ${expected}`, () => assert.equal(needsHashUpgrade(current, settings), expected));
  }
});
