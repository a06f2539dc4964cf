import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../support/backends.js';
import { statusCounts, wrongGuessesThenRight } from '../support/concurrent-guesses.js';
import { request, type HttpResponse } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';
import { childPids, requestsFrom, untilTrue } from '../support/workers.js';

const ADMIN: [string, string] = ['boss', 'b0ss-pass'];
/** Which worker answered: its request ids share a prefix. */
const workerOf = (res: HttpResponse): string => String(res.headers['x-couch-request-id']).slice(0, 6);
const LOCKED = { error: 'forbidden', reason: 'Account is temporarily locked due to multiple authentication failures' };

/** Security issue 32, item 15: the lockout is the node's, not each worker's (default settings: threshold 5). */
for (const backend of BACKENDS.map((each) => each.name)) describe(`the real binary with two workers on ${backend}: one lockout for the whole node`, () => {
  let data: string;
  let divan: RunningDivan;
  const schema = uniqueSchema();
  const createUser = async (name: string): Promise<void> => {
    const created = await request(divan.url, `/_users/org.couchdb.user:${name}`, { method: 'PUT', auth: ADMIN, body: { name, password: `${name}-pass`, roles: [], type: 'user' } });
    assert.equal(created.status, 201, created.text);
  };
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'divan-lockout-workers-'));
    const ini = join(data, 'local.ini');
    writeFileSync(ini, backend === 'postgres' ? `[divan]\nstorage = postgres\npostgres_schema = ${schema}\n` : '');
    const env: Record<string, string> = { COUCHDB_USER: ADMIN[0], COUCHDB_PASSWORD: ADMIN[1], ...(backend === 'postgres' ? { DIVAN_POSTGRES_URL: POSTGRES_TEST_URL! } : {}) };
    divan = await startDivan(['--port', '0', '--workers', '2', '--data', data, '--config', ini], env);
  });
  after(async () => {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
    if (backend === 'postgres') await dropSchema(POSTGRES_TEST_URL!, schema);
  });

  test('issue 32 item 15: 19 wrong Basic passwords at once over both workers get exactly 5 answers of 401, the rest and the right one 403', async () => {
    await createUser('victim');
    const { wrong, right } = await wrongGuessesThenRight((password) => request(divan.url, '/_session', { auth: ['victim', password] }), 'victim-pass');
    const workers = new Set(wrong.map(workerOf));
    assert.equal(workers.size, 2, 'both workers answered guesses');
    assert.deepEqual(statusCounts(wrong), { 401: 5, 403: 14 }, 'only the threshold of guesses is checked on the node');
    assert.deepEqual({ status: right.status, body: right.body }, { status: 403, body: LOCKED });
  });

  test('issue 32 item 15: a worker that replaces a killed one keeps the lock: every guess through either worker stays 403', async () => {
    await createUser('target');
    for (let i = 1; i <= 5; i++) assert.equal((await request(divan.url, '/_session', { auth: ['target', `wrong-${i}`] })).status, 401, `failure ${i}`);
    const before = childPids(divan.child.pid!);
    process.kill(before[0]!, 'SIGKILL');
    // The replacement listens once both workers answer again (round robin alternates).
    // A connection handed to the killed worker may be closed unanswered.
    const bothAnswer = async (): Promise<boolean> => new Set((await requestsFrom(divan.url, '/_up', {}, 4)).map(workerOf)).size === 2;
    await untilTrue(async () => !childPids(divan.child.pid!).includes(before[0]!) && (await bothAnswer().catch(() => false)), 30000);
    const answers = await requestsFrom(divan.url, '/_session', { auth: ['target', 'target-pass'] }, 6);
    assert.equal(new Set(answers.map(workerOf)).size, 2, 'both workers answered');
    assert.deepEqual(statusCounts(answers), { 403: 6 });
  });
});

/** Security issue 32, item 15, across nodes: a worker started on node B knows the failures node A saw. */
describe('two nodes on PostgreSQL, B with two workers: a replacement worker on B keeps a lock made through A', { skip: POSTGRES_TEST_URL === undefined ? 'no PostgreSQL' : false }, () => {
  let data: string;
  let nodeA: RunningDivan;
  let nodeB: RunningDivan;
  const schema = uniqueSchema();
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'divan-lockout-nodes-'));
    const ini = join(data, 'local.ini');
    writeFileSync(ini, `[divan]\nstorage = postgres\npostgres_schema = ${schema}\n`);
    const env = { COUCHDB_USER: ADMIN[0], COUCHDB_PASSWORD: ADMIN[1], DIVAN_POSTGRES_URL: POSTGRES_TEST_URL! };
    nodeA = await startDivan(['--port', '0', '--workers', '1', '--data', join(data, 'a'), '--config', ini], env);
    nodeB = await startDivan(['--port', '0', '--workers', '2', '--data', join(data, 'b'), '--config', ini], env);
  });
  after(async () => {
    await Promise.all([nodeA.stop(), nodeB.stop()]);
    rmSync(data, { recursive: true, force: true });
    await dropSchema(POSTGRES_TEST_URL!, schema);
  });

  test('issue 32 item 15: 5 failures through node A, a worker of B killed and replaced: every attempt through either worker of B is 403', async () => {
    const created = await request(nodeA.url, '/_users/org.couchdb.user:roamer', { method: 'PUT', auth: ADMIN, body: { name: 'roamer', password: 'roamer-pass', roles: [], type: 'user' } });
    assert.equal(created.status, 201, created.text);
    for (let i = 1; i <= 5; i++) assert.equal((await request(nodeA.url, '/_session', { auth: ['roamer', `wrong-${i}`] })).status, 401, `failure ${i}`);
    await untilTrue(async () => (await request(nodeB.url, '/_session', { auth: ['roamer', 'roamer-pass'] })).status === 403);
    const [victim] = childPids(nodeB.child.pid!);
    process.kill(victim!, 'SIGKILL');
    const bothAnswer = async (): Promise<boolean> => new Set((await requestsFrom(nodeB.url, '/_up', {}, 4)).map(workerOf)).size === 2;
    await untilTrue(async () => !childPids(nodeB.child.pid!).includes(victim!) && (await bothAnswer().catch(() => false)), 30000);
    const answers = await requestsFrom(nodeB.url, '/_session', { auth: ['roamer', 'roamer-pass'] }, 6);
    assert.equal(new Set(answers.map(workerOf)).size, 2, 'both workers answered');
    assert.deepEqual(statusCounts(answers), { 403: 6 });
  });

  test('issue 32 item 15: 19 wrong passwords sent at once to two nodes on PostgreSQL get exactly threshold answers of 401', async () => {
    const created = await request(nodeA.url, '/_users/org.couchdb.user:spread', { method: 'PUT', auth: ADMIN, body: { name: 'spread', password: 'spread-pass', roles: [], type: 'user' } });
    assert.equal(created.status, 201, created.text);
    let sent = 0;
    const nodes = [nodeA, nodeB];
    const { wrong, right } = await wrongGuessesThenRight((password) => request(nodes[sent++ % 2]!.url, '/_session', { auth: ['spread', password] }), 'spread-pass');
    assert.deepEqual(statusCounts(wrong), { 401: 5, 403: 14 }, 'only the threshold of guesses is checked in the whole cluster');
    assert.deepEqual({ status: right.status, body: right.body }, { status: 403, body: LOCKED });
  });
});
