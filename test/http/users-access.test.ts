import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import {
  ANONYMOUS_SESSION,
  answerOf,
  BAD_CREDENTIALS,
  FAST_INI,
  MISSING,
  NOT_ALLOWED_FOR_DB,
  NOT_AUTHORIZED_FOR_DB,
  NOT_A_SERVER_ADMIN,
  createUser,
  deleteConfig,
  expectedDerivedKey,
  forbidden,
  loginCookie,
  postSession,
  readUser,
  sessionBody,
  setConfig,
  userBody,
  userPath,
  whoAmI,
} from '../support/users-helpers.js';

const ADMIN_ONLY = { members: { roles: ['_admin'] }, admins: { roles: ['_admin'] } };
const DESIGN_DOCS_FORBIDDEN = forbidden('Only administrators can view design docs in the users database.');

describe('_users: reading user documents (the database stays admin-only)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + '[chttpd_auth_lockout]\nmode = off\n' });
    await createUser(server, 'owner', 'owner-pass', ['reader'], { email: 'owner@example.org' });
    await createUser(server, 'other', 'other-pass');
    const ddoc = await server.admin('/_users/_design/test', { method: 'PUT', body: { views: {} } });
    assert.equal(ddoc.status, 201);
  });
  after(async () => server.close());

  test('_users has the admin-only security object by default', async () => {
    const res = await server.admin('/_users/_security');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, ADMIN_ONLY);
  });

  test('the owner reads their own doc with Basic: 200, the full doc (salt and derived_key included)', async () => {
    const full = await readUser(server, 'owner');
    const res = await server.request(userPath('owner'), { auth: ['owner', 'owner-pass'] });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, full!);
    assert.equal(res.headers['etag'], `"${full!['_rev']}"`);
    assert.match(res.body.derived_key, /^[0-9a-f]{64}$/);
  });

  test('the owner reads their own doc with a cookie: 200, the full doc', async () => {
    const cookie = await loginCookie(server, 'owner', 'owner-pass');
    const res = await server.request(userPath('owner'), { headers: { Cookie: cookie } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, await readUser(server, 'owner'));
  });

  test('another user reading it → 404 {"error":"not_found","reason":"missing"} (Basic and cookie)', async () => {
    const basic = await server.request(userPath('owner'), { auth: ['other', 'other-pass'] });
    assert.equal(basic.status, 404);
    assert.deepEqual(basic.body, MISSING);
    const cookie = await loginCookie(server, 'other', 'other-pass');
    const viaCookie = await server.request(userPath('owner'), { headers: { Cookie: cookie } });
    assert.equal(viaCookie.status, 404);
    assert.deepEqual(viaCookie.body, MISSING);
  });

  test('a user asking for a doc that does not exist gets the same 404 missing', async () => {
    const res = await server.request(userPath('nobody-here'), { auth: ['other', 'other-pass'] });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, MISSING);
  });

  test('anonymous reading a user doc → 404 missing', async () => {
    const res = await server.request(userPath('owner'));
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, MISSING);
  });

  test('the admin reads the full doc', async () => {
    const res = await server.admin(userPath('owner'));
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ['_id', '_rev', 'password_scheme', 'pbkdf2_prf', 'salt', 'iterations', 'derived_key', 'name', 'type', 'roles', 'email']);
    assert.equal(res.body.email, 'owner@example.org');
  });

  test('public_fields = name with users_db_public = true: other users see only _id, _rev and name; the owner still all', async () => {
    await setConfig(server, 'chttpd_auth', 'public_fields', 'name');
    await setConfig(server, 'chttpd_auth', 'users_db_public', 'true');
    try {
      const full = await readUser(server, 'owner');
      const res = await server.request(userPath('owner'), { auth: ['other', 'other-pass'] });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { _id: 'org.couchdb.user:owner', _rev: full!['_rev'], name: 'owner' });
      const own = await server.request(userPath('owner'), { auth: ['owner', 'owner-pass'] });
      assert.deepEqual(own.body, full);
      const admin = await server.admin(userPath('owner'));
      assert.deepEqual(admin.body, full);
    } finally {
      await deleteConfig(server, 'chttpd_auth', 'public_fields');
      await deleteConfig(server, 'chttpd_auth', 'users_db_public');
    }
    const after = await server.request(userPath('owner'), { auth: ['other', 'other-pass'] });
    assert.equal(after.status, 404, 'back to 404 once the settings are gone');
  });

  test('design docs in _users → 403 Only administrators can view design docs … for users and anonymous; admin 200', async () => {
    const user = await server.request('/_users/_design/test', { auth: ['owner', 'owner-pass'] });
    assert.equal(user.status, 403);
    assert.deepEqual(user.body, DESIGN_DOCS_FORBIDDEN);
    const anonymous = await server.request('/_users/_design/test');
    assert.equal(anonymous.status, 403);
    assert.deepEqual(anonymous.body, DESIGN_DOCS_FORBIDDEN);
    const admin = await server.admin('/_users/_design/test');
    assert.equal(admin.status, 200);
    assert.deepEqual(admin.body, { _id: '_design/test', _rev: admin.body._rev, views: {} });
  });

  for (const listing of ['_all_docs', '_changes', '_all_docs?include_docs=true']) {
    test(`GET /_users/${listing} → 401 You are not a server admin. for a user (Basic, cookie) and anonymous; 200 for the admin`, async () => {
      const expected = { status: 401, body: NOT_A_SERVER_ADMIN };
      const basic = await server.request(`/_users/${listing}`, { auth: ['owner', 'owner-pass'] });
      const cookie = await loginCookie(server, 'owner', 'owner-pass');
      const viaCookie = await server.request(`/_users/${listing}`, { headers: { Cookie: cookie } });
      const anonymous = await server.request(`/_users/${listing}`);
      assert.deepEqual({ basic: answerOf(basic), cookie: answerOf(viaCookie), anonymous: answerOf(anonymous) }, { basic: expected, cookie: expected, anonymous: expected });
      assert.equal((await server.admin(`/_users/${listing}`)).status, 200);
    });
  }

  test('public_fields and users_db_public do not open _all_docs of _users to users', async () => {
    await setConfig(server, 'chttpd_auth', 'public_fields', 'name');
    await setConfig(server, 'chttpd_auth', 'users_db_public', 'true');
    try {
      const res = await server.request('/_users/_all_docs?include_docs=true', { auth: ['other', 'other-pass'] });
      assert.deepEqual(answerOf(res), { status: 401, body: NOT_A_SERVER_ADMIN });
    } finally {
      await deleteConfig(server, 'chttpd_auth', 'public_fields');
      await deleteConfig(server, 'chttpd_auth', 'users_db_public');
    }
  });
});

describe('_users: writes by users while _users is admin-only', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + '[chttpd_auth_lockout]\nmode = off\n' });
  });
  after(async () => server.close());

  test('the owner changes their password with a cookie: 201; old password 401 (Basic and /_session), new works, old cookie anonymous', async () => {
    await createUser(server, 'changer', 'old-pass', ['reader']);
    const cookie = await loginCookie(server, 'changer', 'old-pass');
    const own = await server.request(userPath('changer'), { headers: { Cookie: cookie } });
    assert.equal(own.status, 200);
    const res = await server.request(userPath('changer'), { method: 'PUT', headers: { Cookie: cookie }, body: { ...own.body, password: 'new-pass' } });
    assert.equal(res.status, 201);
    assert.match(res.body.rev, /^2-[0-9a-f]{32}$/);
    assert.deepEqual(res.body, { ok: true, id: 'org.couchdb.user:changer', rev: res.body.rev });

    const stored = await readUser(server, 'changer');
    assert.equal('password' in stored!, false);
    assert.notEqual(stored!['salt'], own.body.salt);
    assert.equal(stored!['iterations'], 1000);
    assert.equal(stored!['pbkdf2_prf'], 'sha256');
    assert.equal(stored!['derived_key'], expectedDerivedKey('new-pass', stored!['salt'], 1000));
    assert.deepEqual(stored!['roles'], ['reader']);

    const oldBasic = await whoAmI(server, { auth: ['changer', 'old-pass'] });
    assert.equal(oldBasic.status, 401);
    assert.deepEqual(oldBasic.body, BAD_CREDENTIALS);
    const oldLogin = await postSession(server, 'changer', 'old-pass');
    assert.equal(oldLogin.status, 401);
    assert.deepEqual(oldLogin.body, BAD_CREDENTIALS);
    assert.deepEqual((await whoAmI(server, { auth: ['changer', 'new-pass'] })).body, sessionBody('changer', ['reader'], 'default'));
    const newLogin = await postSession(server, 'changer', 'new-pass');
    assert.equal(newLogin.status, 200);
    assert.deepEqual(newLogin.body, { ok: true, name: 'changer', roles: ['reader'] });
    const oldCookie = await whoAmI(server, { cookie });
    assert.equal(oldCookie.status, 200);
    assert.deepEqual(oldCookie.body, ANONYMOUS_SESSION, 'the salt changed, so the old cookie is ignored');
  });

  test('the owner changes their password with Basic: 201; the old password is refused right after', async () => {
    await createUser(server, 'basicchanger', 'old-pass');
    const own = await server.request(userPath('basicchanger'), { auth: ['basicchanger', 'old-pass'] });
    const res = await server.request(userPath('basicchanger'), { method: 'PUT', auth: ['basicchanger', 'old-pass'], body: { ...own.body, password: 'new-pass' } });
    assert.equal(res.status, 201);
    const old = await whoAmI(server, { auth: ['basicchanger', 'old-pass'] });
    assert.equal(old.status, 401);
    assert.deepEqual(old.body, BAD_CREDENTIALS);
    assert.equal((await whoAmI(server, { auth: ['basicchanger', 'new-pass'] })).status, 200);
  });

  test('the owner changing their own roles → 403 Only _admin may edit roles; reordering them is fine', async () => {
    await createUser(server, 'climber', 'climber-pass', ['a', 'b']);
    const own = (await server.request(userPath('climber'), { auth: ['climber', 'climber-pass'] })).body;
    for (const roles of [['a', 'b', 'c'], ['a'], [], ['a', 'b', '_admin']]) {
      const res = await server.request(userPath('climber'), { method: 'PUT', auth: ['climber', 'climber-pass'], body: { ...own, roles } });
      assert.equal(res.status, 403, JSON.stringify(roles));
      assert.deepEqual(res.body, forbidden('Only _admin may edit roles'));
    }
    assert.equal((await readUser(server, 'climber'))!['_rev'], own._rev);
    const reordered = await server.request(userPath('climber'), { method: 'PUT', auth: ['climber', 'climber-pass'], body: { ...own, roles: ['b', 'a'] } });
    assert.equal(reordered.status, 201);
    assert.deepEqual((await whoAmI(server, { auth: ['climber', 'climber-pass'] })).body.userCtx, { name: 'climber', roles: ['b', 'a'] });
  });

  test("a user updating or deleting another user's doc → 403 not allowed, exactly as for a name that does not exist; the doc is unchanged", async () => {
    await createUser(server, 'victim', 'victim-pass', ['x']);
    await createUser(server, 'intruder', 'intruder-pass');
    const doc = await readUser(server, 'victim');
    const update = await server.request(userPath('victim'), { method: 'PUT', auth: ['intruder', 'intruder-pass'], body: { ...doc, password: 'pwned' } });
    assert.equal(update.status, 403);
    assert.deepEqual(update.body, NOT_ALLOWED_FOR_DB);
    const cookie = await loginCookie(server, 'intruder', 'intruder-pass');
    const del = await server.request(userPath('victim', `?rev=${doc!['_rev']}`), { method: 'DELETE', headers: { Cookie: cookie } });
    assert.equal(del.status, 403);
    assert.deepEqual(del.body, NOT_ALLOWED_FOR_DB);
    assert.deepEqual(await readUser(server, 'victim'), doc);
    assert.equal((await whoAmI(server, { auth: ['victim', 'victim-pass'] })).status, 200);
  });

  test('a user creating a doc for a new name → 403 You are not allowed to access this db.', async () => {
    await createUser(server, 'recruiter', 'recruiter-pass');
    const res = await server.request(userPath('recruit'), { method: 'PUT', auth: ['recruiter', 'recruiter-pass'], body: userBody('recruit', 'pw') });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, NOT_ALLOWED_FOR_DB);
    assert.equal(await readUser(server, 'recruit'), undefined);
  });

  test('anonymous signup is closed by default: PUT and POST → 401 You are not authorized to access this db.', async () => {
    const put = await server.request(userPath('newbie'), { method: 'PUT', body: userBody('newbie', 'newbie-pass') });
    assert.equal(put.status, 401);
    assert.deepEqual(put.body, NOT_AUTHORIZED_FOR_DB);
    const post = await server.request('/_users', { method: 'POST', body: userBody('newbie', 'newbie-pass') });
    assert.equal(post.status, 401);
    assert.deepEqual(post.body, NOT_AUTHORIZED_FOR_DB);
    assert.equal(await readUser(server, 'newbie'), undefined);
  });

  test('anonymous updates and deletes of existing user docs are refused while _users is closed: 401 You are not authorized to access this db.', async () => {
    const rev = await createUser(server, 'target', 'target-pass');
    const doc = await readUser(server, 'target');
    const update = await server.request(userPath('target'), { method: 'PUT', body: { ...doc, password: 'pwned' } });
    const del = await server.request(userPath('target', `?rev=${rev}`), { method: 'DELETE' });
    const expected = { status: 401, body: NOT_AUTHORIZED_FOR_DB };
    assert.deepEqual({ update: answerOf(update), delete: answerOf(del) }, { update: expected, delete: expected });
    assert.deepEqual(await readUser(server, 'target'), doc);
  });

  test("PUT /_users/_security while [couchdb] users_db_security_editable is off → 403 You can't edit the security object of the user database.", async () => {
    const res = await server.admin('/_users/_security', { method: 'PUT', body: {} });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, forbidden("You can't edit the security object of the user database."));
    assert.deepEqual((await server.admin('/_users/_security')).body, ADMIN_ONLY);
  });
});

describe('_users: anonymous signup after an admin opens _users/_security', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + '[chttpd_auth_lockout]\nmode = off\n' });
    await setConfig(server, 'couchdb', 'users_db_security_editable', 'true');
    const open = await server.admin('/_users/_security', { method: 'PUT', body: {} });
    assert.equal(open.status, 200);
    assert.deepEqual(open.body, { ok: true });
  });
  after(async () => server.close());

  test('the security object now reads {}', async () => {
    assert.deepEqual((await server.admin('/_users/_security')).body, {});
  });

  test('anonymous PUT signup with roles [] → 201 {ok,id,rev}; the new user logs in with roles []', async () => {
    const res = await server.request(userPath('signup'), { method: 'PUT', body: userBody('signup', 'signup-pass') });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { ok: true, id: 'org.couchdb.user:signup', rev: res.body.rev });
    const doc = await readUser(server, 'signup');
    assert.equal('password' in doc!, false);
    assert.equal(doc!['derived_key'], expectedDerivedKey('signup-pass', doc!['salt'], 1000));
    assert.deepEqual((await whoAmI(server, { auth: ['signup', 'signup-pass'] })).body, sessionBody('signup', [], 'default'));
  });

  test('anonymous POST /_users signup → 201', async () => {
    const res = await server.request('/_users', { method: 'POST', body: userBody('postsignup', 'pw') });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { ok: true, id: 'org.couchdb.user:postsignup', rev: res.body.rev });
  });

  test('anonymous signup with roles → 403 Only _admin may set roles (any role, _admin included)', async () => {
    for (const [name, roles] of [['roly', ['reader']], ['admy', ['_admin']], ['metry', ['_metrics']]] as const) {
      const res = await server.request(userPath(name), { method: 'PUT', body: userBody(name, 'pw', roles) });
      assert.equal(res.status, 403, name);
      assert.deepEqual(res.body, forbidden('Only _admin may set roles'));
      assert.equal(await readUser(server, name), undefined);
    }
  });

  test('anonymous signup of an existing name → 409 conflict', async () => {
    await createUser(server, 'taken', 'taken-pass');
    const res = await server.request(userPath('taken'), { method: 'PUT', body: userBody('taken', 'mine-now') });
    assert.deepEqual(answerOf(res), { status: 409, body: { error: 'conflict', reason: 'Document update conflict.' } });
    assert.equal((await whoAmI(server, { auth: ['taken', 'taken-pass'] })).status, 200);
  });

  test('anonymous update of an existing doc → 403 You may only update your own user document.', async () => {
    await createUser(server, 'someone', 'someone-pass');
    const doc = await readUser(server, 'someone');
    const res = await server.request(userPath('someone'), { method: 'PUT', body: { ...doc, password: 'pwned' } });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, forbidden('You may only update your own user document.'));
    assert.deepEqual(await readUser(server, 'someone'), doc);
  });

  test('anonymous delete of a user doc → 403 Only admins may delete other user docs.', async () => {
    const rev = await createUser(server, 'keepme', 'keepme-pass');
    const res = await server.request(userPath('keepme', `?rev=${rev}`), { method: 'DELETE' });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, forbidden('Only admins may delete other user docs.'));
    assert.equal((await readUser(server, 'keepme'))!['_rev'], rev);
  });

  test('closing _users again (admin-only security) closes signup again: 401', async () => {
    const close = await server.admin('/_users/_security', { method: 'PUT', body: ADMIN_ONLY });
    assert.equal(close.status, 200);
    try {
      const res = await server.request(userPath('toolate'), { method: 'PUT', body: userBody('toolate', 'pw') });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, NOT_AUTHORIZED_FOR_DB);
    } finally {
      assert.equal((await server.admin('/_users/_security', { method: 'PUT', body: {} })).status, 200);
    }
  });
});
