import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import {
  FAST_INI,
  NO_LOCKOUT_INI,
  createUser,
  expectedDerivedKey,
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

const SALT = '1112283cf988a34f124200a050d308a1';
const SHA1_10 = 'e579375db0e0c6a6fc79cd9e36a36859f71575c3';

type Doc = Record<string, any>;

/** Waits (up to 2 s) for the background upgrade to have rewritten the doc. */
function upgradedDoc(server: TestServer, name: string, iterations: number): Promise<Doc | undefined> {
  return pollUntil(
    () => readUser(server, name),
    (doc) => doc?.['password_scheme'] === 'pbkdf2' && doc['pbkdf2_prf'] === 'sha256' && doc['iterations'] === iterations,
  );
}

/**
 * Closing a server waits for every hash upgrade in flight; reopening it on the same data dir then
 * shows what was written, so "nothing changed" is proved without guessing a delay.
 */
async function restart(server: TestServer): Promise<TestServer> {
  await server.close();
  return startServer({ dataDir: server.dataDir });
}

describe('hash upgrade on authentication ([chttpd_auth] upgrade_hash_on_auth, default true)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI });
  });
  after(async () => server.close());

  test('iterations raised from 1000 to 2000: the first login after it rewrites the doc with 2000, a new derived_key and the SAME salt; its cookie keeps working', async () => {
    await createUser(server, 'upgr', 'upgr-pass', ['r'], { email: 'u@example.org' });
    const before = await readUser(server, 'upgr');
    assert.equal(before!['iterations'], 1000);

    await setConfig(server, 'chttpd_auth', 'iterations', '2000');
    try {
      const cookie = await loginCookie(server, 'upgr', 'upgr-pass');
      const after = await upgradedDoc(server, 'upgr', 2000);
      assert.ok(after, 'the doc is still there');
      assert.equal(after['iterations'], 2000, 'upgraded within 2 s');
      assert.equal(after['salt'], before!['salt'], 'the salt is preserved');
      assert.notEqual(after['derived_key'], before!['derived_key']);
      assert.equal(after['derived_key'], expectedDerivedKey('upgr-pass', before!['salt'], 2000));
      assert.match(after['_rev'], /^2-/);
      assert.deepEqual(Object.keys(after), Object.keys(before!), 'same fields, same order');
      assert.equal('password' in after, false);
      assert.equal('preserve_salt' in after, false);
      assert.deepEqual([after['roles'], after['email']], [['r'], 'u@example.org']);

      assert.deepEqual((await whoAmI(server, { cookie })).body, sessionBody('upgr', ['r'], 'cookie'), 'the cookie survives: same salt');
      assert.deepEqual((await whoAmI(server, { auth: ['upgr', 'upgr-pass'] })).body, sessionBody('upgr', ['r'], 'default'));
      assert.equal((await postSession(server, 'upgr', 'upgr-pass')).status, 200);
    } finally {
      await setConfig(server, 'chttpd_auth', 'iterations', '1000');
    }
  });

  test('a user who logged in before the change (password in the verified cache, cookie in hand) is upgraded at the next Basic login; the old cookie still works', async () => {
    await createUser(server, 'regular', 'regular-pass', ['r']);
    const before = await readUser(server, 'regular');
    const cookie = await loginCookie(server, 'regular', 'regular-pass');
    assert.equal((await whoAmI(server, { auth: ['regular', 'regular-pass'] })).status, 200);
    assert.deepEqual(await readUser(server, 'regular'), before, 'logins at the configured cost upgrade nothing');

    await setConfig(server, 'chttpd_auth', 'iterations', '2000');
    try {
      assert.equal((await whoAmI(server, { auth: ['regular', 'regular-pass'] })).status, 200);
      const after = await upgradedDoc(server, 'regular', 2000);
      assert.equal(after!['iterations'], 2000, 'upgraded within 2 s (CouchDB upgrades after every successful check, cached or not)');
      assert.equal(after!['salt'], before!['salt']);
      assert.equal(after!['derived_key'], expectedDerivedKey('regular-pass', before!['salt'], 2000));
      assert.deepEqual((await whoAmI(server, { cookie })).body, sessionBody('regular', ['r'], 'cookie'));
    } finally {
      await setConfig(server, 'chttpd_auth', 'iterations', '1000');
    }
  });

  test('POST /_session also upgrades', async () => {
    await createUser(server, 'sessupgr', 'sess-pass');
    const before = await readUser(server, 'sessupgr');
    await setConfig(server, 'chttpd_auth', 'iterations', '1200');
    try {
      assert.equal((await postSession(server, 'sessupgr', 'sess-pass')).status, 200);
      const after = await upgradedDoc(server, 'sessupgr', 1200);
      assert.equal(after!['iterations'], 1200);
      assert.equal(after!['salt'], before!['salt']);
      assert.equal(after!['derived_key'], expectedDerivedKey('sess-pass', before!['salt'], 1200));
    } finally {
      await setConfig(server, 'chttpd_auth', 'iterations', '1000');
    }
  });

  test('a `simple` user doc (created by an admin with password_sha and salt) logs in and is upgraded to pbkdf2 with the same salt', async () => {
    const res = await server.admin(userPath('simple'), {
      method: 'PUT',
      body: userBody('simple', undefined, ['old'], { password_scheme: 'simple', salt: SALT, password_sha: sha1Hex('apple' + SALT) }),
    });
    assert.equal(res.status, 201);
    const cookie = await loginCookie(server, 'simple', 'apple');
    assert.deepEqual((await whoAmI(server, { auth: ['simple', 'apple'] })).body, sessionBody('simple', ['old'], 'default'));
    const after = await upgradedDoc(server, 'simple', 1000);
    assert.ok(after);
    assert.deepEqual(after, {
      _id: 'org.couchdb.user:simple',
      _rev: after['_rev'],
      password_scheme: 'pbkdf2',
      pbkdf2_prf: 'sha256',
      salt: SALT,
      iterations: 1000,
      derived_key: expectedDerivedKey('apple', SALT, 1000),
      name: 'simple',
      type: 'user',
      roles: ['old'],
    });
    assert.match(after['_rev'], /^2-/);
    assert.deepEqual((await whoAmI(server, { cookie })).body, sessionBody('simple', ['old'], 'cookie'));
    assert.equal((await whoAmI(server, { auth: ['simple', 'apple'] })).status, 200);
  });

  test('a CouchDB 3.3 pbkdf2 doc (no pbkdf2_prf: SHA-1, 10 iterations) is upgraded to sha256 with the same salt', async () => {
    const res = await server.admin(userPath('sha1user'), {
      method: 'PUT',
      body: userBody('sha1user', undefined, [], { password_scheme: 'pbkdf2', iterations: 10, derived_key: SHA1_10, salt: SALT }),
    });
    assert.equal(res.status, 201);
    assert.equal((await whoAmI(server, { auth: ['sha1user', 'apple'] })).status, 200);
    const after = await upgradedDoc(server, 'sha1user', 1000);
    assert.equal(after!['pbkdf2_prf'], 'sha256');
    assert.equal(after!['salt'], SALT);
    assert.equal(after!['derived_key'], expectedDerivedKey('apple', SALT, 1000));
  });
});

describe('hash upgrade switched off, and [admins] entries', () => {
  const dataDirs: string[] = [];
  after(() => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  test('upgrade_hash_on_auth = false: logins at a changed iteration count leave the doc untouched; switching it on upgrades', async () => {
    let server = await startServer({ ini: FAST_INI + 'upgrade_hash_on_auth = false\n' + NO_LOCKOUT_INI, keepData: true });
    dataDirs.push(server.dataDir);
    try {
      await createUser(server, 'steady', 'steady-pass');
      const before = await readUser(server, 'steady');
      await setConfig(server, 'chttpd_auth', 'iterations', '2000');
      assert.equal((await whoAmI(server, { auth: ['steady', 'steady-pass'] })).status, 200);
      assert.equal((await postSession(server, 'steady', 'steady-pass')).status, 200);

      server = await restart(server);
      assert.deepEqual(await readUser(server, 'steady'), before, 'no upgrade was written');
      await setConfig(server, 'chttpd_auth', 'upgrade_hash_on_auth', 'true');
      assert.equal((await whoAmI(server, { auth: ['steady', 'steady-pass'] })).status, 200);
      const after = await upgradedDoc(server, 'steady', 2000);
      assert.equal(after!['iterations'], 2000, 'the control: with the switch on, the same login upgrades');
      assert.equal(after!['salt'], before!['salt']);
    } finally {
      await server.close().catch(() => undefined);
    }
  });

  test('an [admins] user is never upgraded (not even with a same-named _users doc), while a plain user on the same server is', async () => {
    let server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI, keepData: true });
    dataDirs.push(server.dataDir);
    try {
      const adminBefore = (await server.admin('/_node/_local/_config/admins/root')).body;
      assert.match(adminBefore, /^-pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},1000$/);
      await createUser(server, 'root', 'doc-pass', ['ops']);
      const rootDocBefore = await readUser(server, 'root');
      await createUser(server, 'plain', 'plain-pass');
      await setConfig(server, 'chttpd_auth', 'iterations', '2000');

      assert.deepEqual((await whoAmI(server, { auth: ['root', 'r00t-pass'] })).body, sessionBody('root', ['_admin', 'ops'], 'default'));
      assert.equal((await postSession(server, 'root', 'r00t-pass')).status, 200);
      assert.equal((await whoAmI(server, { auth: ['plain', 'plain-pass'] })).status, 200);
      const plain = await upgradedDoc(server, 'plain', 2000);
      assert.equal(plain!['iterations'], 2000, 'upgrades do run on this server');

      server = await restart(server);
      assert.equal((await server.admin('/_node/_local/_config/admins/root')).body, adminBefore, 'the [admins] hash is unchanged');
      assert.deepEqual(await readUser(server, 'root'), rootDocBefore, 'the same-named doc is unchanged');
    } finally {
      await server.close().catch(() => undefined);
    }
  });
});
