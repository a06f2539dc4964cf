// User names with control characters or unpaired surrogates are refused on every path (security
// issue item 4), and a per-user database belongs to the one name it was made for.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { OWNER_KEY, perUserDatabaseName } from '../../src/databases/per-user.js';
import { bearer, externalAuthIni } from '../support/external-auth.js';
import { startServer, type TestServer } from '../support/server.js';
import { answerOf, createUser, FAST_INI, forbidden, NO_LOCKOUT_INI, openSignup, setConfig, userBody, userPath, USER_PREFIX } from '../support/users-helpers.js';

const REFUSAL = 'Usernames may not contain control characters or unpaired surrogates.';
const SECRET = Buffer.from('user-names-test-hmac-secret-0123456789');
/** The name that shares bob's per-user database under CouchDB's unpadded hex. */
const BOBS_TWIN = '\u0006&\u000f\u0006\u0002';

/**
 * Refused by the name rule: C0 (the one-digit bytes, TAB, LF, the last), DEL, C1 (first, NEL,
 * last). NUL and unpaired surrogates cannot even be document ids (400, a test below); the name
 * rule still refuses them where no document is involved (JWT, proxy).
 */
const REFUSED_NAMES: readonly [string, string][] = [
  ['a one-digit byte (bob\'s twin)', BOBS_TWIN],
  ['TAB', 'a\tb'],
  ['LF', 'a\nb'],
  ['U+001F', 'a\u001f'],
  ['DEL', 'a\u007fb'],
  ['U+0080', '\u0080a'],
  ['NEL U+0085', 'a\u0085b'],
  ['U+009F', 'a\u009f'],
];

/** Accepted: letters beyond ASCII, a surrogate pair, a no-break space (a space, not a control). */
const ACCEPTED_NAMES: readonly string[] = ['zoë', 'emoji😀', 'no\u00a0break', 'ümlaut-ß'];


describe('user names: control characters and unpaired surrogates', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      ini: `${FAST_INI}${NO_LOCKOUT_INI}[couch_peruser]\nenable = true\ndelete_dbs = true\n${externalAuthIni(SECRET)}`,
    });
    await openSignup(server);
  });
  after(async () => server.close());

  for (const [what, name] of REFUSED_NAMES) {
    test(`sign-up with a name holding ${what} → 403 forbidden, and no document or database`, async () => {
      const databases = (await server.admin('/_all_dbs')).body;
      // POST with the id in the JSON body: a path cannot carry an unpaired surrogate.
      const res = await server.request('/_users', { method: 'POST', body: userBody(name, 'pw') });
      assert.deepEqual(answerOf(res), { status: 403, body: forbidden(REFUSAL) });
      const listed = await server.admin('/_users/_all_docs', { method: 'POST', body: { keys: [USER_PREFIX + name] } });
      assert.deepEqual(listed.body.rows, [{ key: USER_PREFIX + name, error: 'not_found' }]);
      assert.deepEqual((await server.admin('/_all_dbs')).body, databases);
    });
  }

  test('a name with NUL or an unpaired surrogate fails the document id rule first → 400', async () => {
    for (const [name, reason] of [
      ['a\u0000b', 'Document id must not contain NUL characters.'],
      ['a\ud800b', 'Document id must be valid UTF-8'],
      ['\udfffa', 'Document id must be valid UTF-8'],
    ] as const) {
      const res = await server.request('/_users', { method: 'POST', body: userBody(name, 'pw') });
      assert.deepEqual(answerOf(res), { status: 400, body: { error: 'illegal_docid', reason } }, JSON.stringify(name));
      const bulk = await server.admin('/_users/_bulk_docs', { method: 'POST', body: { docs: [userBody(name, 'pw')] } });
      assert.deepEqual(answerOf(bulk), { status: 201, body: [{ id: USER_PREFIX + name, error: 'illegal_docid', reason }] }, JSON.stringify(name));
    }
  });

  test('admins get the same refusal, through PUT, POST and _bulk_docs', async () => {
    const name = 'x\u0001y';
    const put = await server.admin(`/_users/${encodeURIComponent(USER_PREFIX + name)}`, { method: 'PUT', body: userBody(name, 'pw') });
    assert.deepEqual(answerOf(put), { status: 403, body: forbidden(REFUSAL) });
    const post = await server.admin('/_users', { method: 'POST', body: userBody(name, 'pw') });
    assert.deepEqual(answerOf(post), { status: 403, body: forbidden(REFUSAL) });
    const bulk = await server.admin('/_users/_bulk_docs', { method: 'POST', body: { docs: [userBody(name, 'pw')] } });
    assert.deepEqual(answerOf(bulk), { status: 201, body: [{ id: USER_PREFIX + name, error: 'forbidden', reason: REFUSAL }] });
  });

  for (const name of ACCEPTED_NAMES) {
    test(`a name like ${JSON.stringify(name)} is accepted and gets its own database`, async () => {
      const res = await server.request(userPath(name), { method: 'PUT', body: userBody(name, 'pw') });
      assert.equal(res.status, 201, res.text);
      const security = await server.admin(`/${perUserDatabaseName('userdb-', name)}/_security`);
      assert.equal(security.body[OWNER_KEY], name);
    });
  }

  test("bob's twin cannot sign up, so bob's database keeps bob alone", async () => {
    await createUser(server, 'bob', 'bob-pass');
    const twin = await server.request(`/_users/${encodeURIComponent(USER_PREFIX + BOBS_TWIN)}`, { method: 'PUT', body: userBody(BOBS_TWIN, 'pw') });
    assert.equal(twin.status, 403);
    const security = await server.admin('/userdb-626f62/_security');
    assert.deepEqual(security.body.members.names, ['bob']);
    assert.deepEqual(security.body.admins.names, ['bob']);
    assert.equal(security.body[OWNER_KEY], 'bob');
  });

  test('a JWT whose sub holds a control character → 400 bad_request, and no database even with on_external_user', async () => {
    await setConfig(server, 'couch_peruser', 'on_external_user', 'true');
    try {
      const databases = (await server.admin('/_all_dbs')).body;
      for (const sub of ['erin\u0000', BOBS_TWIN, 'x\u0085', 'x\ud800']) {
        const res = await server.request('/_session', { headers: await bearer(SECRET, sub) });
        assert.deepEqual(answerOf(res), { status: 400, body: { error: 'bad_request', reason: REFUSAL } }, JSON.stringify(sub));
      }
      assert.deepEqual((await server.admin('/_all_dbs')).body, databases, 'no database was created for a refused name');
      assert.deepEqual((await server.admin('/userdb-626f62/_security')).body.members.names, ['bob'], "the twin's token did not join bob's database");
      const fine = await server.request('/_session', { headers: await bearer(SECRET, 'erin') });
      assert.equal(fine.body.userCtx.name, 'erin');
    } finally {
      await setConfig(server, 'couch_peruser', 'on_external_user', 'false');
    }
  });

  test('a proxy user name with a TAB or a C1 byte → 400 bad_request', async () => {
    for (const name of ['b\tob', 'b\u0085ob']) {
      const res = await server.request('/_session', { headers: { 'X-Auth-CouchDB-UserName': name } });
      assert.deepEqual(answerOf(res), { status: 400, body: { error: 'bad_request', reason: REFUSAL } }, JSON.stringify(name));
    }
    const fine = await server.request('/_session', { headers: { 'X-Auth-CouchDB-UserName': 'bøb' } });
    assert.equal(fine.status, 200, fine.text);
  });

  test('a database recorded for another name is never joined nor deleted by this one', async () => {
    const db = perUserDatabaseName('userdb-', 'carl');
    assert.equal((await server.admin(`/${db}`, { method: 'PUT' })).status, 201);
    const taken = { members: { names: ['someone'] }, admins: { names: ['someone'] }, [OWNER_KEY]: 'someone' };
    assert.equal((await server.admin(`/${db}/_security`, { method: 'PUT', body: taken })).status, 200);
    await createUser(server, 'carl', 'carl-pass');
    assert.deepEqual((await server.admin(`/${db}/_security`)).body, taken, 'carl was not added');
    assert.ok(server.logs.some((line) => line.includes(db) && line.includes('another user name')), server.logs.join('\n'));
    const current = await server.admin(userPath('carl'));
    assert.equal((await server.admin(userPath('carl', `?rev=${current.body._rev}`), { method: 'DELETE' })).status, 200);
    assert.equal((await server.admin(`/${db}`)).status, 200, 'delete_dbs did not delete a database made for someone else');
  });

  test('a database without a record (made by hand, or before records) is recorded for the name whose hex it is', async () => {
    const db = perUserDatabaseName('userdb-', 'dana');
    assert.equal((await server.admin(`/${db}`, { method: 'PUT' })).status, 201);
    await createUser(server, 'dana', 'dana-pass');
    const security = (await server.admin(`/${db}/_security`)).body;
    assert.deepEqual([security.members.names, security[OWNER_KEY]], [['dana'], 'dana']);
  });

  test('a secondary users database (acme/_users) hands out no per-user databases', async () => {
    assert.equal((await server.admin('/acme%2F_users', { method: 'PUT' })).status, 201);
    const res = await server.admin(`/acme%2F_users/${encodeURIComponent(`${USER_PREFIX}fred`)}`, { method: 'PUT', body: userBody('fred', 'pw') });
    assert.equal(res.status, 201, res.text);
    assert.equal((await server.admin(`/${perUserDatabaseName('userdb-', 'fred')}`)).status, 404);
  });
});
