// A `_users` document named like an `[admins]` entry lends it its roles and nothing else (security
// issue item 5): not its second factor, and its conflicts do not stop the admin from logging in.
// In a users database each edit of a batch is validated against the batch's earlier edits of its id.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import {
  answerOf,
  CONFLICTED_USER_DOC,
  createUser,
  FAST_INI,
  loginCookie,
  NO_LOCKOUT_INI,
  openSignup,
  postSession,
  readUser,
  userBody,
  userPath,
  whoAmI,
} from '../support/users-helpers.js';

// The RFC 6238 seed "12345678901234567890" in base32: a usable second factor.
const TOTP = { key: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' };

/** Two revisions of one new document, as a replicator would push them. */
function twoRevisions(name: string, extra: Record<string, unknown> = {}) {
  return [
    { ...userBody(name, 'first-pw'), _rev: '1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', ...extra },
    { ...userBody(name, 'second-pw'), _rev: '1-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', ...extra },
  ];
}

describe('[admins] names and same-named _users documents, with open sign-up', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI + '[admins]\nboss = boss-pass\nchief = chief-pass\n' });
    await openSignup(server);
  });
  after(async () => server.close());

  test('anyone may still create a document named like an admin (as CouchDB); it lends no second factor', async () => {
    const res = await server.request(userPath('boss'), { method: 'PUT', body: userBody('boss', 'squatter-pw', [], { totp: TOTP }) });
    assert.equal(res.status, 201, res.text);
    const basic = await whoAmI(server, { auth: ['boss', 'boss-pass'] });
    assert.deepEqual([basic.status, basic.body.userCtx], [200, { name: 'boss', roles: ['_admin'] }], 'Basic is not refused as for a TOTP user');
    const login = await postSession(server, 'boss', 'boss-pass');
    assert.deepEqual(answerOf(login), { status: 200, body: { ok: true, name: 'boss', roles: ['_admin'] } }, 'no code asked for');
    const squatter = await postSession(server, 'boss', 'squatter-pw', { 'X-Forwarded-For': '10.9.9.9' });
    assert.equal(squatter.status, 401, "the document's password never opens an admin name");
  });

  test('the admin keeps the roles an admin gave the same-named document', async () => {
    const doc = await readUser(server, 'boss');
    assert.equal((await server.admin(userPath('boss'), { method: 'PUT', body: { ...doc, roles: ['ops'] } })).status, 201);
    assert.deepEqual((await whoAmI(server, { auth: ['boss', 'boss-pass'] })).body.userCtx, { name: 'boss', roles: ['_admin', 'ops'] });
  });

  test('anonymous _bulk_docs new_edits:false with two revisions of an admin name: the second is refused, no conflict', async () => {
    const cookie = await loginCookie(server, 'chief', 'chief-pass');
    const res = await server.request('/_users/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: twoRevisions('chief') } });
    assert.deepEqual(answerOf(res), {
      status: 201,
      body: [{ id: 'org.couchdb.user:chief', error: 'forbidden', reason: 'You may only update your own user document.' }],
    });
    const stored = await server.admin(userPath('chief', '?conflicts=true'));
    assert.equal(stored.body._conflicts, undefined, stored.text);
    assert.equal((await whoAmI(server, { auth: ['chief', 'chief-pass'] })).status, 200);
    assert.equal((await whoAmI(server, { cookie })).body.userCtx.name, 'chief', 'the cookie still works');
  });

  test('a later anonymous revision of an existing admin-named document is refused too', async () => {
    const [, second] = twoRevisions('chief');
    const res = await server.request('/_users/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [{ ...second, _rev: '1-cccccccccccccccccccccccccccccccc' }] } });
    assert.deepEqual(res.body, [{ id: 'org.couchdb.user:chief', error: 'forbidden', reason: 'You may only update your own user document.' }]);
  });

  test('even a conflicted document (written by an admin) leaves the admin its login, cookie and the winner\'s roles', async () => {
    const docs = twoRevisions('boss2').map((doc) => ({ ...doc, roles: ['ops'] }));
    await server.app.config.set('admins', 'boss2', 'boss2-pass');
    await server.app.services.admins.settled();
    const cookie = await loginCookie(server, 'boss2', 'boss2-pass');
    const res = await server.admin('/_users/_bulk_docs', { method: 'POST', body: { new_edits: false, docs } });
    assert.deepEqual(answerOf(res), { status: 201, body: [] });
    const stored = await server.admin(userPath('boss2', '?conflicts=true'));
    assert.equal(stored.body._conflicts.length, 1, 'the document is conflicted');
    assert.deepEqual((await whoAmI(server, { auth: ['boss2', 'boss2-pass'] })).body.userCtx, { name: 'boss2', roles: ['_admin', 'ops'] });
    assert.equal((await postSession(server, 'boss2', 'boss2-pass')).status, 200);
    assert.deepEqual((await whoAmI(server, { cookie })).body.userCtx, { name: 'boss2', roles: ['_admin', 'ops'] });
  });

  test('a conflicted document of an ordinary user still refuses its logins (as CouchDB)', async () => {
    const res = await server.admin('/_users/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: twoRevisions('plain') } });
    assert.equal(res.status, 201);
    const basic = await whoAmI(server, { auth: ['plain', 'first-pw'] });
    assert.deepEqual(answerOf(basic), { status: 401, body: CONFLICTED_USER_DOC });
  });

  test('a batch is validated in order: an anonymous create then an update of the same new name → the update is refused', async () => {
    const [first, second] = twoRevisions('newcomer');
    const res = await server.request('/_users/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [first, second] } });
    assert.deepEqual(res.body, [{ id: 'org.couchdb.user:newcomer', error: 'forbidden', reason: 'You may only update your own user document.' }]);
    const stored = await server.admin(userPath('newcomer', '?conflicts=true'));
    assert.deepEqual([stored.body._rev, stored.body._conflicts], ['1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', undefined]);
  });

  test('the owner may push two revisions of their own document in one batch (it only concerns them)', async () => {
    await createUser(server, 'owner', 'owner-pw');
    const current = await readUser(server, 'owner');
    const edits = [
      { ...current, _rev: '2-dddddddddddddddddddddddddddddddd', _revisions: { start: 2, ids: ['dddddddddddddddddddddddddddddddd', current!._rev.slice(2)] }, note: 'a' },
      { ...current, _rev: '2-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', _revisions: { start: 2, ids: ['eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', current!._rev.slice(2)] }, note: 'b' },
    ];
    const res = await server.request('/_users/_bulk_docs', { method: 'POST', auth: ['owner', 'owner-pw'], body: { new_edits: false, docs: edits } });
    assert.deepEqual(answerOf(res), { status: 201, body: [] });
  });

});
