import assert from 'node:assert/strict';
import { subscribe } from 'node:diagnostics_channel';
import { after, before, describe, test } from 'node:test';
import type { TestServer } from '../support/server.js';
import {
  BAD_CREDENTIALS,
  NO_LOCKOUT_INI,
  answerOf,
  authSessionOf,
  createUser,
  deleteConfig,
  readUser,
  sessionBody,
  setConfig,
  userPath,
  whoAmI,
} from '../support/users-helpers.js';

/*
 * Counting PBKDF2 derivations instead of timing them: every derivation the server starts is
 * announced on the `divan:pbkdf2` diagnostics channel with the salt it hashes with, so a test counts
 * the derivations for one user's salt only.
 */
const saltsHashed: string[] = [];
subscribe('divan:pbkdf2', (message) => saltsHashed.push((message as { salt: string }).salt));
const { startServer } = await import('../support/server.js');

function derivations(salt: string): number {
  return saltsHashed.filter((hashed) => hashed === salt).length;
}

async function saltOf(server: TestServer, name: string): Promise<string> {
  const doc = await readUser(server, name);
  assert.ok(doc, `${name} exists`);
  return doc['salt'] as string;
}

describe('R-BASIC-2 R-BASIC-3: what a Basic request costs in PBKDF2 derivations (600000 iterations)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: NO_LOCKOUT_INI });
  });
  after(async () => server.close());

  test('the counter sees the server hash passwords (a user created at 600000 iterations costs one derivation)', async () => {
    await createUser(server, 'probe', 'probe-pass');
    const doc = await readUser(server, 'probe');
    assert.equal(doc!['iterations'], 600000);
    assert.equal(derivations(doc!['salt']), 1, 'every derivation is announced on divan:pbkdf2');
  });

  test('R-BASIC-3: with the verified-password cache on, the first Basic request costs one derivation, the next 20 none', async () => {
    await createUser(server, 'frequent', 'frequent-pass', ['r']);
    const salt = await saltOf(server, 'frequent');
    const start = derivations(salt);
    const first = await whoAmI(server, { auth: ['frequent', 'frequent-pass'] });
    assert.deepEqual(first.body, sessionBody('frequent', ['r'], 'default'));
    assert.equal(derivations(salt), start + 1, 'the first request verifies the password the slow way');
    for (let i = 0; i < 20; i++) {
      const res = await whoAmI(server, { auth: ['frequent', 'frequent-pass'] });
      assert.equal(res.status, 200);
    }
    assert.equal(derivations(salt), start + 1, 'the next 20 are answered from the cache');
    const wrong = await whoAmI(server, { auth: ['frequent', 'frequent-pass!'] });
    assert.deepEqual(answerOf(wrong), { status: 401, body: BAD_CREDENTIALS });
  });

  test('with [couch_passwords_cache] enable = false every Basic request pays one derivation (the control)', async () => {
    await createUser(server, 'uncached', 'uncached-pass');
    const salt = await saltOf(server, 'uncached');
    await setConfig(server, 'couch_passwords_cache', 'enable', 'false');
    try {
      const start = derivations(salt);
      for (let i = 0; i < 3; i++) assert.equal((await whoAmI(server, { auth: ['uncached', 'uncached-pass'] })).status, 200);
      assert.equal(derivations(salt), start + 3);
    } finally {
      await deleteConfig(server, 'couch_passwords_cache', 'enable');
    }
  });

  test('R-BASIC-2: the cookie from a Basic response authenticates later requests with no derivation at all, even with the cache off', async () => {
    await createUser(server, 'cookiejar', 'cookiejar-pass', ['r']);
    const salt = await saltOf(server, 'cookiejar');
    await setConfig(server, 'couch_passwords_cache', 'enable', 'false');
    try {
      const basic = await whoAmI(server, { auth: ['cookiejar', 'cookiejar-pass'] });
      assert.equal(basic.status, 200);
      const cookie = authSessionOf(basic);
      assert.ok(cookie && cookie !== 'AuthSession=', 'the Basic response carries an AuthSession cookie');
      const start = derivations(salt);
      for (let i = 0; i < 10; i++) {
        const res = await whoAmI(server, { cookie });
        assert.deepEqual(res.body, sessionBody('cookiejar', ['r'], 'cookie'));
      }
      assert.equal(derivations(salt), start);
    } finally {
      await deleteConfig(server, 'couch_passwords_cache', 'enable');
    }
  });

  test('a password change: the old password never matches the cached entry (401 at once); the new one costs one derivation, then none', async () => {
    await createUser(server, 'rotator', 'first-pass');
    assert.equal((await whoAmI(server, { auth: ['rotator', 'first-pass'] })).status, 200);
    assert.equal((await whoAmI(server, { auth: ['rotator', 'first-pass'] })).status, 200);
    const doc = await readUser(server, 'rotator');
    assert.equal((await server.admin(userPath('rotator'), { method: 'PUT', body: { ...doc, password: 'second-pass' } })).status, 201);
    const newSalt = await saltOf(server, 'rotator');
    assert.notEqual(newSalt, doc!['salt']);

    assert.deepEqual(answerOf(await whoAmI(server, { auth: ['rotator', 'first-pass'] })), { status: 401, body: BAD_CREDENTIALS });
    const start = derivations(newSalt);
    for (let i = 0; i < 5; i++) assert.equal((await whoAmI(server, { auth: ['rotator', 'second-pass'] })).status, 200);
    assert.equal(derivations(newSalt) - start, 1, 'one slow check for the new password, then the cache');
    assert.deepEqual(answerOf(await whoAmI(server, { auth: ['rotator', 'first-pass'] })), { status: 401, body: BAD_CREDENTIALS });
  });
});
