import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import {
  ANONYMOUS_SESSION,
  BAD_CREDENTIALS,
  CONFLICTED_USER_DOC,
  FAST_INI,
  NO_LOCKOUT_INI,
  answerOf,
  authSessionOf,
  createUser,
  deleteConfig,
  forbidden,
  loginCookie,
  pollUntil,
  postSession,
  readUser,
  sessionBody,
  setConfig,
  sha1Hex,
  userBody,
  userPath,
  whoAmI,
} from '../support/users-helpers.js';

// Reference §2.5 vectors: password "apple" with this salt.
const SALT = '1112283cf988a34f124200a050d308a1';
const SHA1_10 = 'e579375db0e0c6a6fc79cd9e36a36859f71575c3';
const SHA256_10 = '897e67c09d4a1fb1a8fd499c9a569904fe9dc85fbbfb45f3f486fcf0bd3fa423';
const SIMPLE_SHA = 'd4b5d8403f6c1d1c7975fb19cbbacf260cebecdf';

const LEGACY_ADMINS = {
  legacy: `-pbkdf2-${SHA1_10},${SALT},10`,
  oldsimple: `-hashed-${SIMPLE_SHA},${SALT}`,
  sha256ten: `-pbkdf2:sha256-${SHA256_10},${SALT},10`,
};

const INI =
  FAST_INI +
  'upgrade_hash_on_auth = false\n' +
  NO_LOCKOUT_INI +
  '[admins]\nboss = boss-pass\n' +
  Object.entries(LEGACY_ADMINS)
    .map(([name, value]) => `${name} = ${value}\n`)
    .join('');

describe('credentials', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: INI });
  });
  after(async () => server.close());

  describe('a server admin with a _users doc of the same name', () => {
    before(async () => {
      await createUser(server, 'boss', 'doc-pass', ['ops', 'audit']);
    });

    test('R-METH-2 R-CTX-2: Basic with the [admins] password → roles ["_admin", ...doc roles]', async () => {
      const res = await whoAmI(server, { auth: ['boss', 'boss-pass'] });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, sessionBody('boss', ['_admin', 'ops', 'audit'], 'default'));
    });

    test('the password of the _users doc does not work: the [admins] password wins (Basic and POST /_session)', async () => {
      const basic = await whoAmI(server, { auth: ['boss', 'doc-pass'] });
      assert.deepEqual(answerOf(basic), { status: 401, body: BAD_CREDENTIALS });
      const login = await postSession(server, 'boss', 'doc-pass');
      assert.deepEqual(answerOf(login), { status: 401, body: BAD_CREDENTIALS });
    });

    test('POST /_session → roles ["_admin", ...doc roles]; the cookie gives the same roles with authenticated "cookie"', async () => {
      const login = await postSession(server, 'boss', 'boss-pass');
      assert.equal(login.status, 200);
      assert.deepEqual(login.body, { ok: true, name: 'boss', roles: ['_admin', 'ops', 'audit'] });
      const res = await whoAmI(server, { cookie: authSessionOf(login)! });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, sessionBody('boss', ['_admin', 'ops', 'audit'], 'cookie'));
    });

    test('the merged roles follow the doc: an admin edit of its roles shows at once', async () => {
      const cookie = await loginCookie(server, 'boss', 'boss-pass');
      const doc = await readUser(server, 'boss');
      const res = await server.admin(userPath('boss'), { method: 'PUT', body: { ...doc, roles: ['ops'] } });
      assert.equal(res.status, 201);
      assert.deepEqual((await whoAmI(server, { auth: ['boss', 'boss-pass'] })).body.userCtx, { name: 'boss', roles: ['_admin', 'ops'] });
      assert.deepEqual((await whoAmI(server, { cookie })).body.userCtx, { name: 'boss', roles: ['_admin', 'ops'] });
    });
  });

  describe('a user doc with conflicts', () => {
    test('R-BASIC-1: Basic → 401 User document conflicts must be resolved …; resolving the conflict lets the user in again', async () => {
      const rev = await createUser(server, 'split', 'split-a', ['a']);
      const cookie = await loginCookie(server, 'split', 'split-a');
      const branch = `1-${'f'.repeat(32)}`;
      const bulk = await server.admin('/_users/_bulk_docs', {
        method: 'POST',
        body: { new_edits: false, docs: [{ ...userBody('split', 'split-b', ['b']), _rev: branch }] },
      });
      assert.equal(bulk.status, 201);
      const stored = await server.admin(userPath('split', '?conflicts=true'));
      assert.equal(stored.body._rev, branch);
      assert.deepEqual(stored.body._conflicts, [rev]);

      for (const password of ['split-a', 'split-b', 'wrong']) {
        const res = await whoAmI(server, { auth: ['split', password] });
        assert.deepEqual(answerOf(res), { status: 401, body: CONFLICTED_USER_DOC }, password);
      }
      const viaCookie = await whoAmI(server, { cookie });
      assert.deepEqual(answerOf(viaCookie), { status: 401, body: CONFLICTED_USER_DOC });
      const login = await postSession(server, 'split', 'split-b');
      assert.deepEqual(answerOf(login), { status: 401, body: CONFLICTED_USER_DOC });

      const resolve = await server.admin(userPath('split', `?rev=${rev}`), { method: 'DELETE' });
      assert.equal(resolve.status, 200);
      assert.deepEqual((await whoAmI(server, { auth: ['split', 'split-b'] })).body, sessionBody('split', ['b'], 'default'));
      assert.deepEqual(answerOf(await whoAmI(server, { auth: ['split', 'split-a'] })), { status: 401, body: BAD_CREDENTIALS });
    });

    test('two conflicting branches created together (one _bulk_docs, new_edits:false) → Basic 401 with the conflict reason', async () => {
      const bulk = await server.admin('/_users/_bulk_docs', {
        method: 'POST',
        body: {
          new_edits: false,
          docs: [
            { ...userBody('twins', 'twins-a', ['a']), _rev: `1-${'a'.repeat(32)}` },
            { ...userBody('twins', 'twins-b', ['b']), _rev: `1-${'b'.repeat(32)}` },
          ],
        },
      });
      assert.equal(bulk.status, 201);
      const stored = await server.admin(userPath('twins', '?conflicts=true'));
      assert.equal(stored.body._rev, `1-${'b'.repeat(32)}`);
      assert.deepEqual(stored.body._conflicts, [`1-${'a'.repeat(32)}`]);
      const res = await whoAmI(server, { auth: ['twins', 'twins-b'] });
      assert.deepEqual(answerOf(res), { status: 401, body: CONFLICTED_USER_DOC });
    });
  });

  describe('credential caches are invalidated by writes', () => {
    test('an admin role change is seen by the very next request, Basic and cookie', async () => {
      await createUser(server, 'shifty', 'shifty-pass', ['a']);
      const cookie = await loginCookie(server, 'shifty', 'shifty-pass');
      assert.deepEqual((await whoAmI(server, { auth: ['shifty', 'shifty-pass'] })).body, sessionBody('shifty', ['a'], 'default'));
      assert.deepEqual((await whoAmI(server, { cookie })).body, sessionBody('shifty', ['a'], 'cookie'));

      const doc = await readUser(server, 'shifty');
      assert.equal((await server.admin(userPath('shifty'), { method: 'PUT', body: { ...doc, roles: ['b', 'c'] } })).status, 201);
      assert.deepEqual((await whoAmI(server, { auth: ['shifty', 'shifty-pass'] })).body, sessionBody('shifty', ['b', 'c'], 'default'));
      assert.deepEqual((await whoAmI(server, { cookie })).body, sessionBody('shifty', ['b', 'c'], 'cookie'));
    });

    test('a role change through _bulk_docs is seen at once too', async () => {
      await createUser(server, 'bulky', 'bulky-pass', ['a']);
      const cookie = await loginCookie(server, 'bulky', 'bulky-pass');
      assert.equal((await whoAmI(server, { auth: ['bulky', 'bulky-pass'] })).status, 200);
      const doc = await readUser(server, 'bulky');
      const bulk = await server.admin('/_users/_bulk_docs', { method: 'POST', body: { docs: [{ ...doc, roles: ['z'] }] } });
      assert.equal(bulk.status, 201);
      assert.equal(bulk.body[0].ok, true);
      assert.deepEqual((await whoAmI(server, { auth: ['bulky', 'bulky-pass'] })).body.userCtx, { name: 'bulky', roles: ['z'] });
      assert.deepEqual((await whoAmI(server, { cookie })).body.userCtx, { name: 'bulky', roles: ['z'] });
    });

    test('deleting the user: Basic → 401 at once, the cookie becomes anonymous, POST /_session → 401', async () => {
      const rev = await createUser(server, 'leaver', 'leaver-pass', ['a']);
      const cookie = await loginCookie(server, 'leaver', 'leaver-pass');
      assert.equal((await whoAmI(server, { auth: ['leaver', 'leaver-pass'] })).status, 200);
      assert.deepEqual((await whoAmI(server, { cookie })).body, sessionBody('leaver', ['a'], 'cookie'));

      assert.equal((await server.admin(userPath('leaver', `?rev=${rev}`), { method: 'DELETE' })).status, 200);
      assert.deepEqual(answerOf(await whoAmI(server, { auth: ['leaver', 'leaver-pass'] })), { status: 401, body: BAD_CREDENTIALS });
      assert.deepEqual(answerOf(await whoAmI(server, { cookie })), { status: 200, body: ANONYMOUS_SESSION });
      assert.deepEqual(answerOf(await postSession(server, 'leaver', 'leaver-pass')), { status: 401, body: BAD_CREDENTIALS });
    });

    test('a user deleted and created again with the same name and password: the old cookie stays anonymous (new salt)', async () => {
      const rev = await createUser(server, 'phoenix', 'phoenix-pass');
      const cookie = await loginCookie(server, 'phoenix', 'phoenix-pass');
      assert.equal((await server.admin(userPath('phoenix', `?rev=${rev}`), { method: 'DELETE' })).status, 200);
      await createUser(server, 'phoenix', 'phoenix-pass', ['reborn']);
      assert.deepEqual((await whoAmI(server, { cookie })).body, ANONYMOUS_SESSION);
      assert.deepEqual((await whoAmI(server, { auth: ['phoenix', 'phoenix-pass'] })).body, sessionBody('phoenix', ['reborn'], 'default'));
    });
  });

  describe('R-BASIC-2 R-BASIC-3: the verified-password cache never outlives a password change', () => {
    for (const enabled of ['true', 'false']) {
      test(`[couch_passwords_cache] enable = ${enabled}: after a change (new salt) the old password → 401 at once, the new one works`, async () => {
        await setConfig(server, 'couch_passwords_cache', 'enable', enabled);
        try {
          const name = `cachy${enabled}`;
          await createUser(server, name, 'first-pass');
          for (let i = 0; i < 5; i++) assert.equal((await whoAmI(server, { auth: [name, 'first-pass'] })).status, 200);
          const wrong = await whoAmI(server, { auth: [name, 'not-the-pass'] });
          assert.deepEqual(answerOf(wrong), { status: 401, body: BAD_CREDENTIALS }, 'a cached success does not let another password in');

          const doc = await readUser(server, name);
          assert.equal((await server.admin(userPath(name), { method: 'PUT', body: { ...doc, password: 'second-pass' } })).status, 201);
          assert.deepEqual(answerOf(await whoAmI(server, { auth: [name, 'first-pass'] })), { status: 401, body: BAD_CREDENTIALS });
          assert.deepEqual(answerOf(await postSession(server, name, 'first-pass')), { status: 401, body: BAD_CREDENTIALS });
          assert.deepEqual((await whoAmI(server, { auth: [name, 'second-pass'] })).body, sessionBody(name, [], 'default'));
          assert.equal((await postSession(server, name, 'second-pass')).status, 200);
        } finally {
          await deleteConfig(server, 'couch_passwords_cache', 'enable');
        }
      });
    }

    test('an [admins] password changed through _config: once hashed, the old password → 401 and the new one works', async () => {
      await setConfig(server, 'admins', 'rotating', 'first-admin-pass');
      const hashed = await pollUntil(() => whoAmI(server, { auth: ['rotating', 'first-admin-pass'] }), (res) => res.status === 200);
      assert.equal(hashed.status, 200);
      const stored = (await server.admin('/_node/_local/_config/admins/rotating')).body;
      assert.match(stored, /^-pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},1000$/, 'the plaintext was replaced by a hash');
      assert.equal((await whoAmI(server, { auth: ['rotating', 'first-admin-pass'] })).status, 200);
      await setConfig(server, 'admins', 'rotating', 'second-admin-pass');
      const next = await pollUntil(() => whoAmI(server, { auth: ['rotating', 'second-admin-pass'] }), (res) => res.status === 200);
      assert.deepEqual(next.body, sessionBody('rotating', ['_admin'], 'default'));
      assert.deepEqual(answerOf(await whoAmI(server, { auth: ['rotating', 'first-admin-pass'] })), { status: 401, body: BAD_CREDENTIALS });
    });
  });

  describe('legacy hashes', () => {
    for (const [name, value] of Object.entries(LEGACY_ADMINS)) {
      test(`[admins] ${name} = ${value.slice(0, 16)}… authenticates "apple" (Basic and POST /_session), refuses other passwords, and is not rewritten`, async () => {
        const res = await whoAmI(server, { auth: [name, 'apple'] });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, sessionBody(name, ['_admin'], 'default'));
        assert.deepEqual(answerOf(await whoAmI(server, { auth: [name, 'apples'] })), { status: 401, body: BAD_CREDENTIALS });
        const login = await postSession(server, name, 'apple');
        assert.equal(login.status, 200);
        assert.deepEqual(login.body, { ok: true, name, roles: ['_admin'] });
        assert.deepEqual((await whoAmI(server, { cookie: authSessionOf(login)! })).body, sessionBody(name, ['_admin'], 'cookie'));
        assert.equal((await server.admin(`/_node/_local/_config/admins/${name}`)).body, value);
      });
    }

    test('a `simple` user doc (password_sha = SHA-1(password ‖ salt)) authenticates with Basic and POST /_session', async () => {
      const res = await server.admin(userPath('simpleton'), {
        method: 'PUT',
        body: userBody('simpleton', undefined, ['old'], { password_scheme: 'simple', salt: SALT, password_sha: sha1Hex('apple' + SALT) }),
      });
      assert.equal(res.status, 201);
      assert.equal(sha1Hex('apple' + SALT), SIMPLE_SHA);
      assert.deepEqual((await whoAmI(server, { auth: ['simpleton', 'apple'] })).body, sessionBody('simpleton', ['old'], 'default'));
      assert.deepEqual(answerOf(await whoAmI(server, { auth: ['simpleton', 'pear'] })), { status: 401, body: BAD_CREDENTIALS });
      const login = await postSession(server, 'simpleton', 'apple');
      assert.deepEqual(answerOf(login), { status: 200, body: { ok: true, name: 'simpleton', roles: ['old'] } });
    });

    test('a user doc without password_scheme counts as `simple`', async () => {
      const res = await server.admin(userPath('schemeless'), {
        method: 'PUT',
        body: userBody('schemeless', undefined, [], { salt: SALT, password_sha: SIMPLE_SHA }),
      });
      assert.equal(res.status, 201);
      assert.deepEqual((await whoAmI(server, { auth: ['schemeless', 'apple'] })).body, sessionBody('schemeless', [], 'default'));
    });

    test('a CouchDB 3.3 pbkdf2 user doc (no pbkdf2_prf: SHA-1, 10 iterations) authenticates', async () => {
      const res = await server.admin(userPath('threethree'), {
        method: 'PUT',
        body: userBody('threethree', undefined, [], { password_scheme: 'pbkdf2', iterations: 10, derived_key: SHA1_10, salt: SALT }),
      });
      assert.equal(res.status, 201);
      assert.deepEqual((await whoAmI(server, { auth: ['threethree', 'apple'] })).body, sessionBody('threethree', [], 'default'));
      assert.deepEqual(answerOf(await whoAmI(server, { auth: ['threethree', 'banana'] })), { status: 401, body: BAD_CREDENTIALS });
    });
  });

  describe('stored hash parameters the server refuses', () => {
    async function storeHash(name: string, fields: Record<string, unknown>): Promise<void> {
      const res = await server.admin(userPath(name), {
        method: 'PUT',
        body: userBody(name, undefined, [], { password_scheme: 'pbkdf2', salt: SALT, derived_key: SHA256_10, ...fields }),
      });
      assert.equal(res.status, 201);
    }

    test('pbkdf2_prf "md5" → 403 PRF is invalid (Basic and POST /_session)', async () => {
      await storeHash('md5user', { pbkdf2_prf: 'md5', iterations: 10 });
      assert.deepEqual(answerOf(await whoAmI(server, { auth: ['md5user', 'apple'] })), { status: 403, body: forbidden('PRF is invalid') });
      assert.deepEqual(answerOf(await postSession(server, 'md5user', 'apple')), { status: 403, body: forbidden('PRF is invalid') });
    });

    test('iterations above [chttpd_auth] max_iterations → 403 Iteration count is too high for this server', async () => {
      await storeHash('toohigh', { pbkdf2_prf: 'sha256', iterations: 2000000000 });
      assert.deepEqual(answerOf(await whoAmI(server, { auth: ['toohigh', 'apple'] })), {
        status: 403,
        body: forbidden('Iteration count is too high for this server'),
      });
    });

    test('iterations below [chttpd_auth] min_iterations → 403 Iteration count is too low for this server', async () => {
      await storeHash('lowok', { pbkdf2_prf: 'sha256', iterations: 10 });
      assert.equal((await whoAmI(server, { auth: ['lowok', 'apple'] })).status, 200, 'fine with the default minimum of 1');
      await setConfig(server, 'chttpd_auth', 'min_iterations', '100');
      try {
        await storeHash('toolow', { pbkdf2_prf: 'sha256', iterations: 10 });
        assert.deepEqual(answerOf(await whoAmI(server, { auth: ['toolow', 'apple'] })), {
          status: 403,
          body: forbidden('Iteration count is too low for this server'),
        });
        assert.deepEqual(answerOf(await postSession(server, 'toolow', 'apple')), {
          status: 403,
          body: forbidden('Iteration count is too low for this server'),
        });
      } finally {
        await deleteConfig(server, 'chttpd_auth', 'min_iterations');
      }
    });
  });
});

