import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { coldUsers, statusCounts, wrongGuessesThenRight } from '../support/concurrent-guesses.js';
import { startServer, type TestServer } from '../support/server.js';
import {
  BAD_CREDENTIALS,
  FAST_INI,
  LOCKED,
  answerOf,
  createUser,
  freshAddress,
  fromAddress,
  postSession,
  readUser,
  sessionBody,
  setConfig,
  userPath,
  whoAmI,
} from '../support/users-helpers.js';

const UNAUTHORIZED = { status: 401, body: BAD_CREDENTIALS };
const FORBIDDEN_LOCKED = { status: 403, body: LOCKED };

function basicFrom(server: TestServer, address: string, name: string, password: string) {
  return whoAmI(server, { auth: [name, password], headers: fromAddress(address) });
}

function loginFrom(server: TestServer, address: string, name: string, password: string) {
  return postSession(server, name, password, fromAddress(address));
}

/** `count` wrong Basic passwords from `address`, each of which must be a plain 401. */
async function failBasic(server: TestServer, address: string, name: string, count: number): Promise<void> {
  for (let i = 1; i <= count; i++) {
    assert.deepEqual(answerOf(await basicFrom(server, address, name, `wrong-${i}`)), UNAUTHORIZED, `failure ${i} of ${name} from ${address}`);
  }
}

describe('[chttpd_auth_lockout] (mode enforce, threshold 5 by default)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI });
    await createUser(server, 'bob', 'bob-pass', ['r']);
  });
  after(async () => server.close());

  test('5 wrong Basic passwords → 401 each; the 6th attempt → 403 Account is temporarily locked … even with the right password', async () => {
    const address = freshAddress();
    await failBasic(server, address, 'bob', 5);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'bob', 'bob-pass')), FORBIDDEN_LOCKED);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'bob', 'wrong-6')), FORBIDDEN_LOCKED);
  });

  test('a locked client gets the same 403 on POST /_session with the right password, and no session cookie', async () => {
    const address = freshAddress();
    await failBasic(server, address, 'bob', 5);
    const res = await loginFrom(server, address, 'bob', 'bob-pass');
    assert.deepEqual(answerOf(res), FORBIDDEN_LOCKED);
    const cookies = [res.headers['set-cookie'] ?? []].flat();
    assert.ok(!cookies.some((cookie) => /^AuthSession=[^;]+/.test(cookie)), 'no usable AuthSession cookie');
  });

  test('another client address (X-Forwarded-For from the trusted loopback proxy) is not locked', async () => {
    const locked = freshAddress();
    await failBasic(server, locked, 'bob', 5);
    assert.deepEqual(answerOf(await basicFrom(server, locked, 'bob', 'bob-pass')), FORBIDDEN_LOCKED);
    const other = freshAddress();
    const basic = await basicFrom(server, other, 'bob', 'bob-pass');
    assert.deepEqual(answerOf(basic), { status: 200, body: sessionBody('bob', ['r'], 'default') });
    const login = await loginFrom(server, other, 'bob', 'bob-pass');
    assert.deepEqual(answerOf(login), { status: 200, body: { ok: true, name: 'bob', roles: ['r'] } });
  });

  test('the last X-Forwarded-For entry is the client address', async () => {
    const client = freshAddress();
    const hop = freshAddress();
    for (let i = 1; i <= 5; i++) {
      const res = await whoAmI(server, { auth: ['bob', `wrong-${i}`], headers: { 'X-Forwarded-For': `${hop}, ${client}` } });
      assert.deepEqual(answerOf(res), UNAUTHORIZED);
    }
    assert.deepEqual(answerOf(await basicFrom(server, client, 'bob', 'bob-pass')), FORBIDDEN_LOCKED);
    assert.equal((await basicFrom(server, hop, 'bob', 'bob-pass')).status, 200);
  });

  test('Basic and POST /_session failures add up: 3 + 2 wrong, then 403', async () => {
    const address = freshAddress();
    await failBasic(server, address, 'bob', 3);
    for (let i = 1; i <= 2; i++) assert.deepEqual(answerOf(await loginFrom(server, address, 'bob', `nope-${i}`)), UNAUTHORIZED);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'bob', 'bob-pass')), FORBIDDEN_LOCKED);
  });

  test('a success does not reset the count: 4 wrong, 1 right, 1 wrong, then locked', async () => {
    const address = freshAddress();
    await failBasic(server, address, 'bob', 4);
    assert.equal((await basicFrom(server, address, 'bob', 'bob-pass')).status, 200);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'bob', 'wrong-5')), UNAUTHORIZED);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'bob', 'bob-pass')), FORBIDDEN_LOCKED);
  });

  test('a server admin from [admins] is locked the same way (CouchDB auth_lockout_test)', async () => {
    const address = freshAddress();
    await failBasic(server, address, 'root', 5);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'root', 'r00t-pass')), FORBIDDEN_LOCKED);
    assert.equal((await basicFrom(server, freshAddress(), 'root', 'r00t-pass')).status, 200);
  });

  test('the lock is per user: another user from the locked address still gets in', async () => {
    await createUser(server, 'neighbour', 'neighbour-pass');
    const address = freshAddress();
    await failBasic(server, address, 'bob', 5);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'bob', 'bob-pass')), FORBIDDEN_LOCKED);
    assert.equal((await basicFrom(server, address, 'neighbour', 'neighbour-pass')).status, 200);
  });

  test('unknown users: POST /_session failures count (6th → 403); Basic failures do not (always 401)', async () => {
    const address = freshAddress();
    for (let i = 1; i <= 8; i++) {
      assert.deepEqual(answerOf(await basicFrom(server, address, 'nobody', 'pw')), UNAUTHORIZED, `Basic attempt ${i}`);
    }
    for (let i = 1; i <= 5; i++) {
      assert.deepEqual(answerOf(await loginFrom(server, address, 'ghost', 'pw')), UNAUTHORIZED, `/_session attempt ${i}`);
    }
    assert.deepEqual(answerOf(await loginFrom(server, address, 'ghost', 'pw')), FORBIDDEN_LOCKED);
    // The count was for a name without a salt; once the user exists it has one, so it starts afresh.
    await createUser(server, 'ghost', 'ghost-pass');
    assert.equal((await loginFrom(server, address, 'ghost', 'ghost-pass')).status, 200);
  });

  test('a password change (new salt) resets the lock', async () => {
    await createUser(server, 'changer', 'old-pass');
    const address = freshAddress();
    await failBasic(server, address, 'changer', 5);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'changer', 'old-pass')), FORBIDDEN_LOCKED);
    const doc = await readUser(server, 'changer');
    assert.equal((await server.admin(userPath('changer'), { method: 'PUT', body: { ...doc, password: 'new-pass' } })).status, 201);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'changer', 'new-pass')), { status: 200, body: sessionBody('changer', [], 'default') });
    assert.deepEqual(answerOf(await basicFrom(server, address, 'changer', 'old-pass')), UNAUTHORIZED);
  });

  test('a role change (same salt) does not reset the lock', async () => {
    await createUser(server, 'rolechange', 'rc-pass', ['a']);
    const address = freshAddress();
    await failBasic(server, address, 'rolechange', 5);
    const doc = await readUser(server, 'rolechange');
    assert.equal((await server.admin(userPath('rolechange'), { method: 'PUT', body: { ...doc, roles: ['b'] } })).status, 201);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'rolechange', 'rc-pass')), FORBIDDEN_LOCKED);
  });

  test('names that differ in case or surrounding spaces are other, unknown users: they neither bypass nor unlock the lock', async () => {
    await createUser(server, 'carol', 'carol-pass');
    const address = freshAddress();
    await failBasic(server, address, 'carol', 5);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'carol', 'carol-pass')), FORBIDDEN_LOCKED);
    for (const variant of ['Carol', 'CAROL', ' carol', 'carol ', '\tcarol']) {
      assert.deepEqual(answerOf(await basicFrom(server, address, variant, 'carol-pass')), UNAUTHORIZED, `Basic ${JSON.stringify(variant)}`);
      assert.deepEqual(answerOf(await loginFrom(server, address, variant, 'carol-pass')), UNAUTHORIZED, `/_session ${JSON.stringify(variant)}`);
    }
    assert.deepEqual(answerOf(await basicFrom(server, address, 'carol', 'carol-pass')), FORBIDDEN_LOCKED, 'still locked');
    assert.deepEqual(answerOf(await loginFrom(server, address, 'carol', 'carol-pass')), FORBIDDEN_LOCKED, 'still locked');
  });

  test('the variants are no password oracle: with the right password they answer exactly like a wrong one', async () => {
    await createUser(server, 'dora', 'dora-pass');
    const address = freshAddress();
    for (const variant of ['Dora', ' dora', 'dora ']) {
      const right = await basicFrom(server, address, variant, 'dora-pass');
      const wrong = await basicFrom(server, address, variant, 'not-dora-pass');
      assert.deepEqual(answerOf(right), UNAUTHORIZED, variant);
      assert.deepEqual(answerOf(right), answerOf(wrong));
    }
  });

  test("failures under a variant name do not lock the real user: after 6 wrong tries as 'Eve', 'eve' still gets in", async () => {
    await createUser(server, 'eve', 'eve-pass');
    const address = freshAddress();
    for (let i = 1; i <= 5; i++) assert.deepEqual(answerOf(await loginFrom(server, address, 'Eve', 'eve-pass')), UNAUTHORIZED);
    for (let i = 1; i <= 2; i++) assert.deepEqual(answerOf(await basicFrom(server, address, 'EVE', 'eve-pass')), UNAUTHORIZED);
    await loginFrom(server, address, 'Eve', 'eve-pass');
    assert.deepEqual(answerOf(await loginFrom(server, address, 'eve', 'eve-pass')), { status: 200, body: { ok: true, name: 'eve', roles: [] } });
    assert.equal((await basicFrom(server, address, 'eve', 'eve-pass')).status, 200);
  });

  test('[chttpd_auth_lockout] threshold is read live', async () => {
    await setConfig(server, 'chttpd_auth_lockout', 'threshold', '2');
    try {
      const address = freshAddress();
      await failBasic(server, address, 'bob', 2);
      assert.deepEqual(answerOf(await basicFrom(server, address, 'bob', 'bob-pass')), FORBIDDEN_LOCKED);
    } finally {
      await setConfig(server, 'chttpd_auth_lockout', 'threshold', '5');
    }
  });

  test('mode = warn: 6 and more wrong passwords are all 401, and the right password still works', async () => {
    await setConfig(server, 'chttpd_auth_lockout', 'mode', 'warn');
    try {
      const address = freshAddress();
      await failBasic(server, address, 'bob', 7);
      for (let i = 1; i <= 2; i++) assert.deepEqual(answerOf(await loginFrom(server, address, 'bob', `nope-${i}`)), UNAUTHORIZED);
      assert.deepEqual(answerOf(await basicFrom(server, address, 'bob', 'bob-pass')), { status: 200, body: sessionBody('bob', ['r'], 'default') });
      assert.equal((await loginFrom(server, address, 'bob', 'bob-pass')).status, 200);
    } finally {
      await setConfig(server, 'chttpd_auth_lockout', 'mode', 'enforce');
    }
  });

  test('mode = off: failures are not even counted, so switching back to enforce does not lock', async () => {
    const address = freshAddress();
    await setConfig(server, 'chttpd_auth_lockout', 'mode', 'off');
    try {
      await failBasic(server, address, 'bob', 7);
      assert.equal((await basicFrom(server, address, 'bob', 'bob-pass')).status, 200);
    } finally {
      await setConfig(server, 'chttpd_auth_lockout', 'mode', 'enforce');
    }
    assert.equal((await basicFrom(server, address, 'bob', 'bob-pass')).status, 200, 'nothing was counted while off');
    await failBasic(server, address, 'bob', 5);
    assert.deepEqual(answerOf(await basicFrom(server, address, 'bob', 'bob-pass')), FORBIDDEN_LOCKED, 'enforce is back');
  });
});

describe('lockout when the loopback peer is NOT a trusted proxy', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + '[chttpd]\ntrusted_proxies = 10.9.9.9\n' });
    await createUser(server, 'dave', 'dave-pass');
  });
  after(async () => server.close());

  test('a client cannot pick its address with X-Forwarded-For: a new header value does not escape the lock', async () => {
    await failBasic(server, '203.0.113.1', 'dave', 5);
    for (const address of ['203.0.113.1', '203.0.113.2', '198.51.100.7']) {
      assert.deepEqual(answerOf(await basicFrom(server, address, 'dave', 'dave-pass')), FORBIDDEN_LOCKED, address);
      assert.deepEqual(answerOf(await loginFrom(server, address, 'dave', 'dave-pass')), FORBIDDEN_LOCKED, address);
    }
    assert.deepEqual(answerOf(await whoAmI(server, { auth: ['dave', 'dave-pass'] })), FORBIDDEN_LOCKED, 'no header at all: the socket address, locked');
  });
});

describe('lockout under concurrency: attempts still being checked count toward the threshold', () => {
  // A real PBKDF2 cost, so that attempts overlap as they do against a production server.
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: '[chttpd_auth]\niterations = 600000\n' });
  });
  after(async () => server.close());

  const slowUser = coldUsers(() => server, 'slow');

  test('19 wrong and 1 right Basic password at once: 5 wrong ones are checked (401), the other 14 and the right one get the lockout 403', async () => {
    const { name, password: rightPassword } = await slowUser();
    const address = freshAddress();
    const { wrong, right } = await wrongGuessesThenRight((password) => basicFrom(server, address, name, password), rightPassword);
    assert.deepEqual(answerOf(right), FORBIDDEN_LOCKED);
    assert.deepEqual(statusCounts(wrong), { 401: 5, 403: 14 });
    for (const res of wrong) assert.deepEqual(answerOf(res), res.status === 401 ? UNAUTHORIZED : FORBIDDEN_LOCKED);
  });

  test('19 wrong and 1 right POST /_session at once: the same answers, and the right one gets no session cookie', async () => {
    const { name, password: rightPassword } = await slowUser();
    const address = freshAddress();
    const { wrong, right } = await wrongGuessesThenRight((password) => loginFrom(server, address, name, password), rightPassword);
    assert.deepEqual(answerOf(right), FORBIDDEN_LOCKED);
    assert.ok(![right.headers['set-cookie'] ?? []].flat().some((cookie) => /^AuthSession=[^;]+/.test(cookie)), 'no usable AuthSession cookie');
    assert.deepEqual(statusCounts(wrong), { 401: 5, 403: 14 });
  });

  test('Basic and /_session guesses in flight together share one count', async () => {
    const { name, password } = await slowUser();
    const address = freshAddress();
    const guesses = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => basicFrom(server, address, name, `basic-${i}`)),
      ...Array.from({ length: 4 }, (_, i) => loginFrom(server, address, name, `session-${i}`)),
    ]);
    assert.deepEqual(statusCounts(guesses), { 401: 5, 403: 3 });
    assert.deepEqual(answerOf(await basicFrom(server, address, name, password)), FORBIDDEN_LOCKED);
  });

  test('10 right passwords at once from one address (nothing cached yet) all get in: waiting is not failing', async () => {
    const { name, password } = await slowUser();
    const address = freshAddress();
    const answers = await Promise.all(Array.from({ length: 10 }, () => basicFrom(server, address, name, password)));
    assert.deepEqual(statusCounts(answers), { 200: 10 });
  });

  test('4 wrong and 1 right at once: as one after another, the right one gets in (4 failures are below the threshold)', async () => {
    const { name, password } = await slowUser();
    const address = freshAddress();
    const answers = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => basicFrom(server, address, name, `wrong-${i}`)),
      basicFrom(server, address, name, password),
    ]);
    assert.deepEqual(answers.map((res) => res.status), [401, 401, 401, 401, 200]);
    assert.deepEqual(answerOf(await basicFrom(server, address, name, 'wrong-5')), UNAUTHORIZED, 'the fifth failure');
    assert.deepEqual(answerOf(await basicFrom(server, address, name, password)), FORBIDDEN_LOCKED);
  });

  test('guesses in flight from one address do not hold back another address', async () => {
    const { name, password: rightPassword } = await slowUser();
    const attacker = freshAddress();
    const { right } = await wrongGuessesThenRight(async (password) => {
      if (password === rightPassword) return basicFrom(server, freshAddress(), name, password);
      return basicFrom(server, attacker, name, password);
    }, rightPassword);
    assert.equal(right.status, 200);
  });
});
