import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pbkdf2Queue } from '../../src/crypto/crypto.js';
import { coldUsers, statusCounts } from '../support/concurrent-guesses.js';
import { startServer, type TestServer } from '../support/server.js';
import {
  BAD_CREDENTIALS,
  FAST_INI,
  answerOf,
  createUser,
  forbidden,
  freshAddress,
  fromAddress,
  postSession,
  readUser,
  setConfig,
  userBody,
  userPath,
  whoAmI,
} from '../support/users-helpers.js';

const BUSY = { error: 'service_unavailable', reason: 'Too many password checks are waiting. Try again shortly.' };
const TOO_MANY_ITERATIONS = forbidden('Iteration count is too high for this server');

/** A user document carrying hash fields of the writer's choosing (no `password`: nothing is hashed on write). */
function ownHash(doc: Record<string, unknown>, iterations: number): Record<string, unknown> {
  return { ...doc, password_scheme: 'pbkdf2', pbkdf2_prf: 'sha256', salt: 'a'.repeat(32), iterations, derived_key: 'b'.repeat(64) };
}

describe('the PBKDF2 queue: a flood of cold logins gets 503s, not an ever longer line', () => {
  let server: TestServer;
  before(async () => {
    // A real PBKDF2 cost; one derivation at a time and one waiting, so the queue fills at once.
    server = await startServer({ ini: '[chttpd_auth]\niterations = 600000\npbkdf2_concurrency = 1\npbkdf2_max_waiting = 1\n' });
  });
  after(async () => server.close());

  const coldUser = coldUsers(() => server, 'crowd');

  test('8 cold Basic logins at once: the queue takes 2, the others get 503 service_unavailable with Retry-After: 1 (never a 500)', async () => {
    const { name: crowd } = await coldUser();
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => whoAmI(server, { auth: [crowd, `guess-${i}`], headers: fromAddress(freshAddress()) })));
    const counts = statusCounts(answers);
    assert.deepEqual(Object.keys(counts).sort(), ['401', '503'], JSON.stringify(counts));
    assert.ok(counts[503]! >= 4, `only ${counts[503]} of 8 were refused`);
    for (const res of answers) {
      if (res.status === 401) assert.deepEqual(res.body, BAD_CREDENTIALS);
      else {
        assert.deepEqual(res.body, BUSY);
        assert.equal(res.headers['retry-after'], '1');
      }
    }
    assert.deepEqual(pbkdf2Queue.stats, { running: 0, waiting: 0, completed: pbkdf2Queue.stats.completed });
  });

  test('a 503 is no verdict on the password: it does not count toward lockout', async () => {
    const { name: crowd } = await coldUser();
    const address = freshAddress();
    const busy: number[] = [];
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all([
        ...Array.from({ length: 2 }, (_, i) => whoAmI(server, { auth: [crowd, `load-${round}-${i}`], headers: fromAddress(freshAddress()) })),
        ...Array.from({ length: 3 }, (_, i) => postSession(server, crowd, `mine-${round}-${i}`, fromAddress(address))),
      ]);
      busy.push(answers.filter((res) => res.status === 503).length);
    }
    assert.ok(busy.reduce((a, b) => a + b) >= 6, `503s per round: ${busy}`);
    assert.equal((await postSession(server, crowd, `${crowd}-pass`, fromAddress(address))).status, 200, 'fewer than 5 real failures from this address');
  });

  test('/_session gets the same 503 (no clearing cookie, no ?fail= redirect: it is not a failed login)', async () => {
    const { name: crowd } = await coldUser();
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => server.request('/_session?fail=/retry', { method: 'POST', body: { name: crowd, password: `p${i}` }, headers: fromAddress(freshAddress()) })));
    const refused = answers.filter((res) => res.status === 503);
    assert.ok(refused.length >= 2, JSON.stringify(statusCounts(answers)));
    for (const res of refused) {
      assert.deepEqual(res.body, BUSY);
      assert.equal(res.headers['location'], undefined);
      assert.equal(res.headers['set-cookie'], undefined);
    }
  });

  test('the limits are read live: with room for 8 waiting, the same 8 logins are all checked', async () => {
    const { name: crowd } = await coldUser();
    await setConfig(server, 'chttpd_auth', 'pbkdf2_max_waiting', '8');
    try {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => whoAmI(server, { auth: [crowd, `again-${i}`], headers: fromAddress(freshAddress()) })));
      assert.deepEqual(statusCounts(answers), { 401: 8 });
    } finally {
      await setConfig(server, 'chttpd_auth', 'pbkdf2_max_waiting', '1');
    }
  });

  test('an admin _bulk_docs of 5 new users passes a queue with no waiting room: a batch is hashed one document after another', async () => {
    await setConfig(server, 'chttpd_auth', 'pbkdf2_max_waiting', '0');
    await setConfig(server, 'chttpd_auth', 'iterations', '1000');
    try {
      const docs = Array.from({ length: 5 }, (_, i) => userBody(`batch${i}`, `batch${i}-pass`));
      const res = await server.admin('/_users/_bulk_docs', { method: 'POST', body: { docs } });
      assert.equal(res.status, 201);
      assert.deepEqual(res.body.map((row: { ok?: boolean; error?: string }) => row.ok ?? row.error), [true, true, true, true, true]);
    } finally {
      await setConfig(server, 'chttpd_auth', 'iterations', '600000');
      await setConfig(server, 'chttpd_auth', 'pbkdf2_max_waiting', '1');
    }
  });
});

describe('PBKDF2 work a client can ask for', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: `${FAST_INI}[couchdb]\nusers_db_security_editable = true\n` });
    await createUser(server, 'mal', 'mal-pass');
  });
  after(async () => server.close());

  test('a user may not give their own document 1e9 iterations (each login would hold a pool thread for minutes): 403, nothing stored', async () => {
    const doc = (await readUser(server, 'mal'))!;
    const res = await server.request(userPath('mal'), { method: 'PUT', auth: ['mal', 'mal-pass'], body: ownHash(doc, 1000000000) });
    assert.deepEqual(answerOf(res), { status: 403, body: TOO_MANY_ITERATIONS });
    assert.equal((await readUser(server, 'mal'))!['_rev'], doc['_rev']);
    const allowed = await server.request(userPath('mal'), { method: 'PUT', auth: ['mal', 'mal-pass'], body: ownHash(doc, 6000000) });
    assert.equal(allowed.status, 201, 'up to max_iterations (6000000 by default) is the user\'s choice');
  });

  test('an admin may store more, but the default max_iterations (6000000) refuses it at login at once, without deriving', async () => {
    await createUser(server, 'heavy', 'heavy-pass');
    const doc = (await readUser(server, 'heavy'))!;
    assert.equal((await server.admin(userPath('heavy'), { method: 'PUT', body: ownHash(doc, 6000001) })).status, 201);
    const before = pbkdf2Queue.stats.completed;
    assert.deepEqual(answerOf(await whoAmI(server, { auth: ['heavy', 'anything'] })), { status: 403, body: TOO_MANY_ITERATIONS });
    assert.equal(pbkdf2Queue.stats.completed, before);
  });

  test('max_iterations never falls below iterations: the server\'s own new hashes still verify', async () => {
    await setConfig(server, 'chttpd_auth', 'max_iterations', '500');
    try {
      await createUser(server, 'fresh', 'fresh-pass');
      assert.equal((await readUser(server, 'fresh'))!['iterations'], 1000);
      assert.equal((await whoAmI(server, { auth: ['fresh', 'fresh-pass'] })).status, 200);
    } finally {
      await setConfig(server, 'chttpd_auth', 'max_iterations', '6000000');
    }
  });

  test('an anonymous 40-document _users/_bulk_docs that validation refuses costs no PBKDF2 at all', async () => {
    assert.equal((await server.admin('/_users/_security', { method: 'PUT', body: {} })).status, 200, 'sign-up open');
    try {
      const docs = Array.from({ length: 40 }, (_, i) => userBody(`signup${i}`, 'pw', ['wants-a-role']));
      const before = pbkdf2Queue.stats.completed;
      const res = await server.request('/_users/_bulk_docs', { method: 'POST', body: { docs } });
      assert.equal(res.status, 201);
      assert.deepEqual(new Set(res.body.map((row: { reason: string }) => row.reason)), new Set(['Only _admin may set roles']));
      assert.equal(pbkdf2Queue.stats.completed, before, 'no document was hashed');
      const signup = await server.request('/_users/_bulk_docs', { method: 'POST', body: { docs: [userBody('signup-ok', 'pw')] } });
      assert.equal(signup.body[0].ok, true);
      assert.equal(pbkdf2Queue.stats.completed, before + 1);
    } finally {
      await server.admin('/_users/_security', { method: 'PUT', body: { members: { roles: ['_admin'] }, admins: { roles: ['_admin'] } } });
    }
  });
});
