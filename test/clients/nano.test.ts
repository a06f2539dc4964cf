// Real client: nano 11 (apache/couchdb-nano 11.0.7), unchanged — cookie login through its own jar.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nano from 'nano';
import { ADMIN, createDatabase, createUser, rawLogin, startClientServer, type ClientServer } from '../support/clients.js';

const DB = 'nano-members';

/** The nano error of a rejected promise (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<nano.RequestError> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    return error as nano.RequestError;
  }
  assert.fail(`expected the call to be rejected, it resolved with ${JSON.stringify(value)}`);
}

describe('nano 11 against the real binary', () => {
  let server: ClientServer;

  before(async () => {
    server = await startClientServer();
    await createUser(server.url, 'alice', 'alice-pass');
    await createUser(server.url, 'bob', 'bob-pass');
    await createUser(server.url, 'mallory', 'mallory-pass');
    await createDatabase(server.url, DB, ['alice']);
  });

  after(async () => {
    await server?.close();
  });

  test('nano.auth() logs in with a form POST /_session and answers {ok, name, roles}', async () => {
    const couch = nano(server.url);
    const login = await couch.auth('alice', 'alice-pass');
    assert.deepEqual(login, { ok: true, name: 'alice', roles: [] });
  });

  test('after nano.auth(), nano.session() rides the AuthSession cookie (userCtx alice, authenticated "cookie")', async () => {
    const couch = nano(server.url);
    await couch.auth('alice', 'alice-pass');
    const session = await couch.session();
    if (session.userCtx?.name !== 'alice' || session.info?.authenticated !== 'cookie') {
      // nano only sends back a cookie whose Set-Cookie carries Expires (it ignores Max-Age).
      assert.fail(`nano did not send the cookie back: session() = ${JSON.stringify(session)}; ${await rawLogin(server.url, 'alice', 'alice-pass')}`);
    }
    assert.equal(session.ok, true);
    assert.deepEqual(session.userCtx, { name: 'alice', roles: [] });
    assert.equal(session.info.authenticated, 'cookie');
    assert.ok(Array.isArray(session.info.authentication_handlers), JSON.stringify(session.info));
    assert.ok(session.info.authentication_handlers.includes('cookie'), JSON.stringify(session.info));
  });

  test('database calls on a members-only database succeed on the cookie alone (insert, get, list)', async () => {
    const anonymous = nano(server.url).use(DB);
    const refused = await rejection(anonymous.get('nothing-yet'));
    assert.equal(refused.statusCode, 401, 'without the cookie the database is closed');
    assert.equal(refused.error, 'unauthorized');

    const couch = nano(server.url);
    await couch.auth('alice', 'alice-pass');
    const db = couch.use<{ kind: string; n: number }>(DB);

    const inserted = await db.insert({ _id: 'doc-1', kind: 'note', n: 1 });
    assert.equal(inserted.ok, true);
    assert.equal(inserted.id, 'doc-1');
    assert.match(inserted.rev, /^1-[0-9a-f]{32}$/);

    const fetched = await db.get('doc-1');
    assert.deepEqual(fetched, { _id: 'doc-1', _rev: inserted.rev, kind: 'note', n: 1 });

    const updated = await db.insert({ _id: 'doc-1', _rev: inserted.rev, kind: 'note', n: 2 });
    assert.match(updated.rev, /^2-/);
    await db.insert({ _id: 'doc-2', kind: 'note', n: 3 });

    const listed = await db.list();
    assert.equal(listed.total_rows, 2);
    assert.deepEqual(
      listed.rows.map((row) => row.id),
      ['doc-1', 'doc-2'],
    );
    assert.equal(listed.rows[0]!.value.rev, updated.rev);
    const stale = await rejection(db.insert({ _id: 'doc-1', _rev: inserted.rev, kind: 'note', n: 9 }));
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.error, 'conflict');

    const session = await couch.session();
    assert.equal(session.info.authenticated, 'cookie', 'still on the cookie after the database calls');
  });

  test('a logged-in user who is not a member gets 403 forbidden', async () => {
    const couch = nano(server.url);
    await couch.auth('bob', 'bob-pass');
    const error = await rejection(couch.use(DB).get('doc-1'));
    assert.equal(error.statusCode, 403, JSON.stringify(error));
    assert.equal(error.error, 'forbidden');
    assert.equal(error.reason, 'You are not allowed to access this db.');
  });

  test('a wrong password makes nano.auth() reject with statusCode 401, and the session stays anonymous', async () => {
    const couch = nano(server.url);
    const error = await rejection(couch.auth('mallory', 'not-her-password'));
    assert.equal(error.statusCode, 401, JSON.stringify(error));
    assert.equal(error.error, 'unauthorized');
    assert.equal(error.reason, 'Name or password is incorrect.');
    // The failed login answers with a clearing cookie (empty value); nano keeps and sends it, and
    // the server must treat `AuthSession=` as no cookie at all.
    const session = await couch.session();
    assert.deepEqual(session.userCtx, { name: null, roles: [] });
    assert.equal(session.info.authenticated, undefined);
  });

  test('an unknown user is refused like a wrong password', async () => {
    const error = await rejection(nano(server.url).auth('nobody', 'whatever'));
    assert.equal(error.statusCode, 401, JSON.stringify(error));
    assert.equal(error.error, 'unauthorized');
  });

  test('each nano instance has its own jar: another instance stays anonymous', async () => {
    const loggedIn = nano(server.url);
    await loggedIn.auth('alice', 'alice-pass');
    const other = nano(server.url);
    const session = await other.session();
    assert.equal(session.userCtx.name, null);
  });

  test('nano with credentials in the URL uses Basic (authenticated "default")', async () => {
    const url = new URL(server.url);
    url.username = ADMIN[0];
    url.password = ADMIN[1];
    const couch = nano(url.toString().replace(/\/$/, ''));
    const session = await couch.session();
    assert.equal(session.userCtx.name, 'admin');
    assert.ok(session.userCtx.roles.includes('_admin'), JSON.stringify(session.userCtx));
    assert.equal(session.info.authenticated, 'default');
    const dbs = await couch.db.list();
    assert.ok(dbs.includes(DB), JSON.stringify(dbs));
  });
});
