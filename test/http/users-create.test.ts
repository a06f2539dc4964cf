import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import {
  BAD_CREDENTIALS,
  FAST_INI,
  NO_LOCKOUT_INI,
  USER_PREFIX,
  authSessionOf,
  createUser,
  deleteConfig,
  expectedDerivedKey,
  forbidden,
  postSession,
  readUser,
  sessionBody,
  setConfig,
  userBody,
  userPath,
  whoAmI,
} from '../support/users-helpers.js';

const REV1 = /^1-[0-9a-f]{32}$/;
const SALT = /^[0-9a-f]{32}$/;
const HASH_FIELDS = ['password_scheme', 'pbkdf2_prf', 'salt', 'iterations', 'derived_key'];

describe('_users: creating users as an admin', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI });
  });
  after(async () => server.close());

  test('R-USERS-1: PUT /_users/org.couchdb.user:alice as admin → 201 {ok,id,rev} with ETag and Location', async () => {
    const res = await server.admin(userPath('alice'), { method: 'PUT', body: userBody('alice', 'alice-pass', ['reader']) });
    assert.equal(res.status, 201);
    assert.match(res.body.rev, REV1);
    assert.deepEqual(res.body, { ok: true, id: 'org.couchdb.user:alice', rev: res.body.rev });
    assert.equal(res.headers['etag'], `"${res.body.rev}"`);
    assert.equal(res.headers['location'], `${server.url}/_users/org.couchdb.user:alice`);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['cache-control'], 'must-revalidate');
  });

  test('the stored doc has no password; pbkdf2/sha256 fields come right after _id and _rev, in CouchDB order', async () => {
    const rev = await createUser(server, 'ordered', 'ordered-pass', ['a', 'b'], { email: 'o@example.org', nested: { x: 1 } });
    const doc = await readUser(server, 'ordered');
    assert.ok(doc);
    assert.deepEqual(Object.keys(doc), ['_id', '_rev', ...HASH_FIELDS, 'name', 'type', 'roles', 'email', 'nested']);
    assert.equal('password' in doc, false);
    assert.match(doc['salt'], SALT);
    assert.match(doc['derived_key'], /^[0-9a-f]{64}$/);
    assert.deepEqual(doc, {
      _id: 'org.couchdb.user:ordered',
      _rev: rev,
      password_scheme: 'pbkdf2',
      pbkdf2_prf: 'sha256',
      salt: doc['salt'],
      iterations: 1000,
      derived_key: expectedDerivedKey('ordered-pass', doc['salt'], 1000, 'sha256'),
      name: 'ordered',
      type: 'user',
      roles: ['a', 'b'],
      email: 'o@example.org',
      nested: { x: 1 },
    });
  });

  test('every write draws a new salt: two users with the same password get different salts and keys', async () => {
    await createUser(server, 'twin1', 'same-pass');
    await createUser(server, 'twin2', 'same-pass');
    const one = await readUser(server, 'twin1');
    const two = await readUser(server, 'twin2');
    assert.notEqual(one!['salt'], two!['salt']);
    assert.notEqual(one!['derived_key'], two!['derived_key']);
  });

  test('R-USERS-1: POST /_users with an _id creates the user: 201 {ok,id,rev} and Location', async () => {
    const res = await server.admin('/_users', { method: 'POST', body: userBody('posted', 'posted-pass', ['x']) });
    assert.equal(res.status, 201);
    assert.match(res.body.rev, REV1);
    assert.deepEqual(res.body, { ok: true, id: 'org.couchdb.user:posted', rev: res.body.rev });
    assert.equal(res.headers['location'], `${server.url}/_users/org.couchdb.user:posted`);
    const doc = await readUser(server, 'posted');
    assert.deepEqual(Object.keys(doc!), ['_id', '_rev', ...HASH_FIELDS, 'name', 'type', 'roles']);
    assert.equal(doc!['derived_key'], expectedDerivedKey('posted-pass', doc!['salt'], 1000));
  });

  test('POST /_users without an _id is refused by the validation: 403 Doc ID must be of the form …', async () => {
    const { _id: _ignored, ...withoutId } = userBody('noid', 'noid-pass');
    const res = await server.admin('/_users', { method: 'POST', body: withoutId });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, forbidden('Doc ID must be of the form org.couchdb.user:name'));
    assert.equal(await readUser(server, 'noid'), undefined);
  });

  test('R-BASIC-1 R-METH-2 R-CTX-2: the new user authenticates with Basic: GET /_session shows userCtx and authenticated "default"', async () => {
    await createUser(server, 'basicuser', 'basic-pass', ['reader', 'writer']);
    const res = await whoAmI(server, { auth: ['basicuser', 'basic-pass'] });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, sessionBody('basicuser', ['reader', 'writer'], 'default'));
    assert.ok(res.body.userCtx.roles.every((role: unknown) => typeof role === 'string'));
  });

  test('R-METH-2: the new user logs in with POST /_session: 200 {ok,name,roles} and a cookie that authenticates', async () => {
    await createUser(server, 'cookieuser', 'cookie-pass', ['reader']);
    const login = await postSession(server, 'cookieuser', 'cookie-pass');
    assert.equal(login.status, 200);
    assert.deepEqual(login.body, { ok: true, name: 'cookieuser', roles: ['reader'] });
    const cookie = authSessionOf(login);
    assert.ok(cookie && cookie.length > 'AuthSession='.length, 'a non-empty AuthSession cookie');
    const res = await whoAmI(server, { cookie });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, sessionBody('cookieuser', ['reader'], 'cookie'));
  });

  test('R-ERR-1: POST /_session with a wrong password or an unknown name → 401 Name or password is incorrect.', async () => {
    await createUser(server, 'errone', 'right-pass');
    for (const [name, password] of [['errone', 'wrong-pass'], ['errone', ''], ['nosuchuser', 'right-pass']] as const) {
      const res = await postSession(server, name, password);
      assert.equal(res.status, 401, `${name}/${password}`);
      assert.deepEqual(res.body, BAD_CREDENTIALS);
    }
  });

  test('R-ERR-2: GET /_session with unrecognised Basic credentials → 401 Name or password is incorrect.', async () => {
    await createUser(server, 'errtwo', 'right-pass');
    for (const auth of [['errtwo', 'wrong-pass'], ['nosuchuser', 'right-pass'], ['ErrTwo', 'right-pass']] as [string, string][]) {
      const res = await whoAmI(server, { auth });
      assert.equal(res.status, 401, auth.join(':'));
      assert.deepEqual(res.body, BAD_CREDENTIALS);
    }
  });

  test('a password containing ":" works with Basic (split on the first colon)', async () => {
    await createUser(server, 'foo@example.org', ':bar');
    const res = await whoAmI(server, { auth: ['foo@example.org', ':bar'] });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, sessionBody('foo@example.org', [], 'default'));
  });

  test('an admin update without a password keeps the hash fields as they are', async () => {
    const rev = await createUser(server, 'keeper', 'keeper-pass', ['a']);
    const before = await readUser(server, 'keeper');
    const res = await server.admin(userPath('keeper'), { method: 'PUT', body: { ...before, roles: ['a', 'b'] } });
    assert.equal(res.status, 201);
    const after = await readUser(server, 'keeper');
    assert.notEqual(after!['_rev'], rev);
    for (const field of HASH_FIELDS) assert.deepEqual(after![field], before![field], field);
    assert.deepEqual(after!['roles'], ['a', 'b']);
    assert.equal((await whoAmI(server, { auth: ['keeper', 'keeper-pass'] })).body.userCtx.name, 'keeper');
  });

  test('an admin password change writes a new salt and derived_key; the old password stops working at once', async () => {
    await createUser(server, 'reset', 'first-pass');
    assert.equal((await whoAmI(server, { auth: ['reset', 'first-pass'] })).status, 200);
    const before = await readUser(server, 'reset');
    const res = await server.admin(userPath('reset'), { method: 'PUT', body: { ...before, password: 'second-pass' } });
    assert.equal(res.status, 201);
    const after = await readUser(server, 'reset');
    assert.notEqual(after!['salt'], before!['salt']);
    assert.equal(after!['derived_key'], expectedDerivedKey('second-pass', after!['salt'], 1000));
    assert.equal('password' in after!, false);
    const old = await whoAmI(server, { auth: ['reset', 'first-pass'] });
    assert.equal(old.status, 401);
    assert.deepEqual(old.body, BAD_CREDENTIALS);
    assert.deepEqual((await whoAmI(server, { auth: ['reset', 'second-pass'] })).body, sessionBody('reset', [], 'default'));
  });

  test('[chttpd_auth] pbkdf2_prf = sha512 gives pbkdf2_prf "sha512" and a 128-hex derived_key that logs in', async () => {
    await setConfig(server, 'chttpd_auth', 'pbkdf2_prf', 'sha512');
    try {
      await createUser(server, 'longkey', 'longkey-pass');
      const doc = await readUser(server, 'longkey');
      assert.deepEqual(Object.keys(doc!).slice(2, 7), HASH_FIELDS);
      assert.equal(doc!['pbkdf2_prf'], 'sha512');
      assert.match(doc!['derived_key'], /^[0-9a-f]{128}$/);
      assert.equal(doc!['derived_key'], expectedDerivedKey('longkey-pass', doc!['salt'], 1000, 'sha512'));
      const res = await whoAmI(server, { auth: ['longkey', 'longkey-pass'] });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, sessionBody('longkey', [], 'default'));
      const login = await postSession(server, 'longkey', 'longkey-pass');
      assert.equal(login.status, 200);
      assert.deepEqual(login.body, { ok: true, name: 'longkey', roles: [] });
    } finally {
      await deleteConfig(server, 'chttpd_auth', 'pbkdf2_prf');
    }
  });

  test('[chttpd_auth] iterations is read live: a user created after a change gets the new count', async () => {
    await setConfig(server, 'chttpd_auth', 'iterations', '1500');
    try {
      await createUser(server, 'fifteen', 'fifteen-pass');
      const doc = await readUser(server, 'fifteen');
      assert.equal(doc!['iterations'], 1500);
      assert.equal(doc!['derived_key'], expectedDerivedKey('fifteen-pass', doc!['salt'], 1500));
    } finally {
      await setConfig(server, 'chttpd_auth', 'iterations', '1000');
    }
  });

  test('a null password is stored as it is and no hash fields are added (CouchDB before_doc_update)', async () => {
    const res = await server.admin(userPath('nullpw'), { method: 'PUT', body: userBody('nullpw', undefined, [], { password: null }) });
    assert.equal(res.status, 201);
    const doc = await readUser(server, 'nullpw');
    assert.deepEqual(doc, { _id: USER_PREFIX + 'nullpw', _rev: res.body.rev, name: 'nullpw', type: 'user', roles: [], password: null });
    const login = await whoAmI(server, { auth: ['nullpw', ''] });
    assert.equal(login.status, 401);
    assert.deepEqual(login.body, BAD_CREDENTIALS);
  });
});

describe('_users: the default hash cost', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: NO_LOCKOUT_INI });
  });
  after(async () => server.close());

  test('without [chttpd_auth] iterations, user docs get iterations 600000 and a matching PBKDF2-SHA256 key', async () => {
    await createUser(server, 'slow', 'slow-pass', ['r']);
    const doc = await readUser(server, 'slow');
    assert.equal(doc!['password_scheme'], 'pbkdf2');
    assert.equal(doc!['pbkdf2_prf'], 'sha256');
    assert.equal(doc!['iterations'], 600000);
    assert.equal(doc!['derived_key'], expectedDerivedKey('slow-pass', doc!['salt'], 600000));
    const res = await whoAmI(server, { auth: ['slow', 'slow-pass'] });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, sessionBody('slow', ['r'], 'default'));
  });
});
