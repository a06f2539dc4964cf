// Real client: pouchdb-authentication 1.1.3 (on pouchdb-core 9.0.0 + pouchdb-adapter-http 9.0.0) — /_session and _users calls.
//
// pouchdb-authentication talks through pouchdb-ajax 6.4 (`request` with ONE process-wide cookie jar,
// separate from PouchDB 9's fetch-cookie jar) and adds Basic from the instance's `auth` option.
// So every test leaves the jar logged out, and cookie sessions use an instance without `auth`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import PouchDB, { type Database } from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import authentication from 'pouchdb-authentication';
import { ADMIN_NAME, ADMIN_PASSWORD, createDatabase, createUser, openUsersDatabase, rawLogin, startClientServer, type ClientServer } from '../support/clients.js';

PouchDB.plugin(httpAdapter).plugin(authentication);

const DB = 'auth-members';

interface PouchError {
  status?: number;
  name?: string;
  message?: string;
}

async function rejection(promise: Promise<unknown>): Promise<PouchError> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    return error as PouchError;
  }
  assert.fail(`expected the call to be rejected, it resolved with ${JSON.stringify(value)}`);
}

describe('pouchdb-authentication 1.1.3 against the real binary', () => {
  let server: ClientServer;
  /** No `auth`: its calls ride the cookie jar only. */
  let jar: Database;
  /** Basic as the server admin on every call. */
  let admin: Database;
  const basic = (username: string, password: string) => new PouchDB<{ n: number }>(`${server.url}/${DB}`, { auth: { username, password }, skip_setup: true });

  /** getSession() as {name, authenticated}, for compact assertions. */
  async function whoAmI(db: Database<object> = jar): Promise<{ name: string | null; authenticated: string | undefined }> {
    const session = await db.getSession();
    assert.equal(session.ok, true, JSON.stringify(session));
    return { name: session.userCtx.name ?? null, authenticated: session.info.authenticated };
  }

  async function logInChecked(name: string, password: string): Promise<void> {
    const login = await jar.logIn(name, password);
    assert.deepEqual(login, { ok: true, name, roles: [] });
    const who = await whoAmI();
    if (who.name !== name || who.authenticated !== 'cookie') {
      assert.fail(`the jar did not carry ${name}'s cookie: getSession() = ${JSON.stringify(who)}; ${await rawLogin(server.url, name, password)}`);
    }
  }

  before(async () => {
    server = await startClientServer();
    jar = new PouchDB(`${server.url}/${DB}`, { skip_setup: true });
    admin = new PouchDB(`${server.url}/${DB}`, { auth: { username: ADMIN_NAME, password: ADMIN_PASSWORD }, skip_setup: true });
    await createUser(server.url, 'alice', 'alice-pass');
    await createUser(server.url, 'bob', 'bob-pass');
    await createUser(server.url, 'dave', 'dave-pass');
    await createUser(server.url, 'erin', 'erin-pass');
    await createDatabase(server.url, DB, ['alice', 'carol', 'dave', 'erin']);
    await basic('alice', 'alice-pass').put({ _id: 'shared', n: 1 });
  });

  after(async () => {
    await server?.close();
  });

  test('logIn (JSON POST /_session), getSession on the cookie, logOut', async () => {
    const login = await jar.logIn('alice', 'alice-pass');
    assert.deepEqual(login, { ok: true, name: 'alice', roles: [] });

    const session = await jar.getSession();
    assert.equal(session.ok, true);
    if (session.userCtx.name !== 'alice') assert.fail(`getSession() after logIn = ${JSON.stringify(session)}; ${await rawLogin(server.url, 'alice', 'alice-pass')}`);
    assert.deepEqual(session.userCtx, { name: 'alice', roles: [] });
    assert.equal(session.info.authenticated, 'cookie');
    assert.deepEqual(session.info.authentication_handlers, ['cookie', 'default']);

    const logout = await jar.logOut();
    assert.deepEqual(logout, { ok: true });
    const afterLogout = await jar.getSession();
    assert.deepEqual(afterLogout.userCtx, { name: null, roles: [] });
    assert.equal(afterLogout.info.authenticated, undefined, 'anonymous sessions have no "authenticated"');
  });

  test('logOut when nobody is logged in still answers {ok:true}', async () => {
    assert.deepEqual(await jar.logOut(), { ok: true });
  });

  test('getSession with Basic credentials only reports the admin and authenticated "default"', async () => {
    const session = await admin.getSession();
    assert.equal(session.userCtx.name, 'admin');
    assert.ok(session.userCtx.roles?.includes('_admin'), JSON.stringify(session.userCtx));
    assert.equal(session.info.authenticated, 'default');
  });

  test('a wrong password makes logIn reject with 401 unauthorized; the jar stays anonymous', async () => {
    const error = await rejection(jar.logIn('bob', 'not-bobs-password'));
    assert.equal(error.status, 401, JSON.stringify(error));
    assert.equal(error.name, 'unauthorized');
    assert.equal(error.message, 'Name or password is incorrect.');
    assert.deepEqual(await whoAmI(), { name: null, authenticated: undefined });
  });

  test('signUp by an admin, then logIn as the new user; a second signUp is a 409 conflict', async () => {
    const signed = await admin.signUp('carol', 'carol-pass');
    assert.equal(signed.ok, true, JSON.stringify(signed));
    assert.equal(signed.id, 'org.couchdb.user:carol');
    assert.match(signed.rev, /^1-/);

    const again = await rejection(admin.signUp('carol', 'other-pass'));
    assert.equal(again.status, 409, JSON.stringify(again));
    assert.equal(again.name, 'conflict');

    await logInChecked('carol', 'carol-pass');
    // carol is a member of DB by name: the admin-written user can use it (Basic, PouchDB's own fetch).
    assert.equal((await basic('carol', 'carol-pass').get('shared')).n, 1);
    assert.deepEqual(await jar.logOut(), { ok: true });
    assert.equal((await whoAmI()).name, null);
  });

  test('Basic for the same user as the cookie is fine (the explicit Basic credentials decide)', async () => {
    await logInChecked('alice', 'alice-pass');
    try {
      const both = basic('alice', 'alice-pass');
      assert.deepEqual(await whoAmI(both), { name: 'alice', authenticated: 'default' });
    } finally {
      await jar.logOut();
    }
  });

  test("Divan's rule: with a valid cookie of one user and Basic of another, Basic decides, never the cookie's user", async () => {
    await logInChecked('alice', 'alice-pass');
    try {
      assert.deepEqual(await whoAmI(admin), { name: 'admin', authenticated: 'default' });
      const wrong = await rejection(basic('alice', 'not-her-password').get('shared'));
      assert.equal(wrong.status, 401, 'a wrong password is refused even with a valid cookie of the same user');
    } finally {
      await jar.logOut();
    }
    assert.equal((await whoAmI(admin)).name, 'admin', 'after logOut the admin Basic works again');
  });

  test('with the default admin-only _users, the owner still changes their own password (DESIGN §1)', async () => {
    await logInChecked('dave', 'dave-pass');
    try {
      const changed = await jar.changePassword('dave', 'dave-new-pass');
      assert.equal(changed.ok, true, JSON.stringify(changed));
    } finally {
      await jar.logOut();
    }
    await logInChecked('dave', 'dave-new-pass');
    await jar.logOut();
    const old = await rejection(jar.logIn('dave', 'dave-pass'));
    assert.equal(old.status, 401, JSON.stringify(old));
  });

  test('with _users opened, changePassword by the user: the new password logs in, the old one gets 401', async () => {
    await openUsersDatabase(server.url);
    // Put erin's old password into the server's verified-password cache first.
    assert.equal((await basic('erin', 'erin-pass').get('shared')).n, 1);

    await logInChecked('erin', 'erin-pass');
    const own = await jar.getUser('erin');
    assert.equal(own._id, 'org.couchdb.user:erin');
    assert.equal(own.name, 'erin');
    assert.equal((own as { password?: unknown }).password, undefined, 'passwords are stored hashed');
    assert.equal((own as { password_scheme?: unknown }).password_scheme, 'pbkdf2');

    const changed = await jar.changePassword('erin', 'erin-new-pass');
    assert.equal(changed.ok, true, JSON.stringify(changed));
    assert.equal(changed.id, 'org.couchdb.user:erin');
    assert.match(changed.rev, /^2-/);
    // The new password gives a new salt, which invalidates the cookie issued before the change.
    assert.deepEqual(await whoAmI(), { name: null, authenticated: undefined }, 'the old cookie no longer authenticates');

    await logInChecked('erin', 'erin-new-pass');
    assert.deepEqual(await jar.logOut(), { ok: true });

    const old = await rejection(jar.logIn('erin', 'erin-pass'));
    assert.equal(old.status, 401, JSON.stringify(old));
    assert.equal(old.name, 'unauthorized');
    assert.equal((await whoAmI()).name, null);

    const oldBasic = await rejection(basic('erin', 'erin-pass').get('shared'));
    assert.equal(oldBasic.status, 401, `the cached old password must be forgotten: ${JSON.stringify(oldBasic)}`);
    assert.equal((await basic('erin', 'erin-new-pass').get('shared')).n, 1);
  });

  test("with _users opened, another user's document is hidden (404 not_found)", async () => {
    await logInChecked('alice', 'alice-pass');
    try {
      const error = await rejection(jar.getUser('erin'));
      assert.equal(error.status, 404, JSON.stringify(error));
      assert.equal(error.name, 'not_found');
    } finally {
      await jar.logOut();
    }
  });
});
