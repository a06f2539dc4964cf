import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../support/backends.js';
import { request, type HttpOptions, type HttpResponse } from '../support/http.js';
import { runDivan, startDivan, type RunningDivan } from '../support/process.js';
import { childPids, processAlive, requestsFrom, untilTrue, withTimeout } from '../support/workers.js';

const ADMIN: [string, string] = ['boss', 'b0ss-pass'];
/** Enough requests, each on its own connection, for both workers to answer several (round robin). */
const ROUNDS = 8;
const JSON_TYPE = { 'Content-Type': 'application/json' };

const cookieOf = (res: HttpResponse): string => String([res.headers['set-cookie']].flat()[0]).split(';')[0]!;

for (const backend of BACKENDS.map((each) => each.name)) {
  describe(`two worker processes on ${backend}: a change made through one holds on the very next request to either`, () => {
    let dir: string;
    let divan: RunningDivan;
    let url: string;
    const schema = uniqueSchema();
    /** The same request ROUNDS times; asserts that both workers answered (their request ids differ in prefix). */
    const everyWorker = async (path: string, options: HttpOptions = {}): Promise<HttpResponse[]> => {
      const responses = await requestsFrom(url, path, options, ROUNDS);
      assert.equal(new Set(responses.map((res) => String(res.headers['x-couch-request-id']).slice(0, 6))).size, 2, 'both workers answered');
      return responses;
    };
    const statuses = (responses: HttpResponse[]): number[] => [...new Set(responses.map((res) => res.status))];

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'divan-workers-'));
      const storage = backend === 'postgres' ? ['storage = postgres', `postgres_schema = ${schema}`] : [];
      const ini = ['[divan]', ...storage, '[admins]', `${ADMIN[0]} = ${ADMIN[1]}`, '[chttpd_auth]', 'iterations = 1000', '[chttpd_auth_lockout]', 'threshold = 10', '[log]', 'level = warning', ''];
      writeFileSync(join(dir, 'local.ini'), ini.join('\n'));
      const env: Record<string, string> = backend === 'postgres' ? { DIVAN_POSTGRES_URL: POSTGRES_TEST_URL! } : {};
      divan = await startDivan(['--port', '0', '--workers', '2', '--data', dir, '--config', join(dir, 'local.ini')], env);
      url = divan.url;
      for (const name of ['alice', 'bob', 'carol', 'victim']) {
        const put = await request(url, `/_users/org.couchdb.user:${name}`, { method: 'PUT', auth: ADMIN, body: { name, password: `${name}-1`, roles: [], type: 'user' } });
        assert.equal(put.status, 201, put.text);
      }
    });

    after(async () => {
      assert.equal(await divan.stop(), 0);
      rmSync(dir, { recursive: true, force: true });
      if (backend === 'postgres') await dropSchema(POSTGRES_TEST_URL!, schema);
    });

    test('the ready line is printed once, by the primary', () => {
      assert.equal(divan.stdout().match(/Divan listening on/g)?.length, 1, divan.stdout());
    });

    test('a password change: the old password fails and the new one works on every worker at once', async () => {
      assert.deepEqual(statuses(await everyWorker('/_session', { auth: ['alice', 'alice-1'] })), [200]);
      const doc = (await request(url, '/_users/org.couchdb.user:alice', { auth: ADMIN })).body;
      const put = await request(url, '/_users/org.couchdb.user:alice', { method: 'PUT', auth: ADMIN, body: { ...doc, password: 'alice-2' } });
      assert.equal(put.status, 201, put.text);
      assert.deepEqual(statuses(await everyWorker('/_session', { auth: ['alice', 'alice-1'] })), [401]);
      assert.deepEqual(statuses(await everyWorker('/_session', { auth: ['alice', 'alice-2'] })), [200]);
    });

    test("a user deletion: neither the password nor the user's cookie authenticates on any worker", async () => {
      const login = await request(url, '/_session', { method: 'POST', body: { name: 'bob', password: 'bob-1' } });
      assert.equal(login.status, 200, login.text);
      const cookie = cookieOf(login);
      const asBob = (await everyWorker('/_session', { headers: { Cookie: cookie } })).map((res) => res.body.userCtx.name);
      assert.deepEqual([...new Set(asBob)], ['bob']);
      const rev = (await request(url, '/_users/org.couchdb.user:bob', { auth: ADMIN })).body._rev;
      assert.equal((await request(url, `/_users/org.couchdb.user:bob?rev=${rev}`, { method: 'DELETE', auth: ADMIN })).status, 200);
      assert.deepEqual(statuses(await everyWorker('/_session', { auth: ['bob', 'bob-1'] })), [401]);
      const afterDeletion = (await everyWorker('/_session', { headers: { Cookie: cookie } })).map((res) => res.body.userCtx.name);
      assert.deepEqual([...new Set(afterDeletion)], [null]);
    });

    test('a lockout: failures spread over both workers lock the account on both', async () => {
      // Ten wrong passwords (the threshold), alternately answered by the two workers.
      assert.deepEqual(statuses(await requestsFrom(url, '/_session', { auth: ['victim', 'wrong'] }, 10)), [401]);
      const locked = await everyWorker('/_session', { auth: ['victim', 'victim-1'] });
      assert.deepEqual(statuses(locked), [403]);
      assert.match(locked[0]!.body.reason, /locked/);
    });

    test('a _config change: every worker follows it on the next request, and follows its deletion', async () => {
      assert.deepEqual(statuses(await everyWorker('/')), [200]);
      const set = await request(url, '/_node/_local/_config/chttpd/require_valid_user', { method: 'PUT', auth: ADMIN, body: '"true"', headers: JSON_TYPE });
      assert.equal(set.status, 200, set.text);
      assert.deepEqual(statuses(await everyWorker('/')), [401]);
      assert.match(readFileSync(join(dir, 'local.ini'), 'utf8'), /require_valid_user = true/, 'written to the file once');
      const removed = await request(url, '/_node/_local/_config/chttpd/require_valid_user', { method: 'DELETE', auth: ADMIN });
      assert.equal(removed.status, 200, removed.text);
      assert.deepEqual(statuses(await everyWorker('/')), [200]);
    });

    test('a new admin set through _config is hashed once and logs in on every worker', async () => {
      const set = await request(url, '/_node/_local/_config/admins/ops', { method: 'PUT', auth: ADMIN, body: '"ops-pass"', headers: JSON_TYPE });
      assert.equal(set.status, 200, set.text);
      await untilTrue(async () => /^ops = -pbkdf2/m.test(readFileSync(join(dir, 'local.ini'), 'utf8')));
      await untilTrue(async () => statuses(await requestsFrom(url, '/_session', { auth: ['ops', 'ops-pass'] }, ROUNDS)).join() === '200');
      const hashes = (await everyWorker('/_node/_local/_config/admins/ops', { auth: ADMIN })).map((res) => res.body);
      assert.equal(new Set(hashes).size, 1, 'every worker holds the same hash');
    });

    test('a _security change: a member removed is refused by every worker on the next request', async () => {
      assert.equal((await request(url, '/guarded', { method: 'PUT', auth: ADMIN })).status, 201);
      const members = (names: string[]) => ({ admins: { names: [], roles: [] }, members: { names, roles: [] } });
      assert.equal((await request(url, '/guarded/_security', { method: 'PUT', auth: ADMIN, body: members(['carol']) })).status, 200);
      assert.deepEqual(statuses(await everyWorker('/guarded', { auth: ['carol', 'carol-1'] })), [200]);
      assert.equal((await request(url, '/guarded/_security', { method: 'PUT', auth: ADMIN, body: members(['someone-else']) })).status, 200);
      assert.deepEqual(statuses(await everyWorker('/guarded', { auth: ['carol', 'carol-1'] })), [403]);
    });

    test('a document written through one worker is read back through the other, and wakes its live feeds', async () => {
      assert.equal((await request(url, '/feeds', { method: 'PUT', auth: ADMIN })).status, 201);
      // Two long polls on two fresh connections: round robin hands them to the two workers.
      const polls = [0, 1].map(() => request(url, '/feeds/_changes?feed=longpoll&since=now&timeout=20000', { auth: ADMIN }));
      await new Promise((wait) => setTimeout(wait, 300));
      const put = await request(url, '/feeds/doc', { method: 'PUT', auth: ADMIN, body: { n: 1 } });
      assert.equal(put.status, 201, put.text);
      const woken = await Promise.all(polls);
      assert.deepEqual(woken.map((res) => res.body.results.map((row: { id: string }) => row.id)), [['doc'], ['doc']]);
      const reads = await everyWorker('/feeds/doc', { auth: ADMIN });
      assert.deepEqual([...new Set(reads.map((res) => res.body._rev))], [put.body.rev]);
      const update = await request(url, '/feeds/doc', { method: 'PUT', auth: ADMIN, body: { _rev: put.body.rev, n: 2 } });
      assert.equal(update.status, 201, update.text);
      const rereads = await everyWorker('/feeds/doc', { auth: ADMIN });
      assert.deepEqual([...new Set(rereads.map((res) => res.body.n))], [2], 'no worker answers from a stale cache');
    });

    test('a killed worker is replaced; no request fails beyond those it was answering', async () => {
      const before = childPids(divan.child.pid!);
      assert.equal(before.length, 2);
      let failed = 0;
      let done = 0;
      let stop = false;
      const client = async (): Promise<void> => {
        while (!stop) {
          await withTimeout(request(url, '/', {}), 5000).then(
            (res) => (res.status === 200 ? done++ : failed++),
            () => failed++,
          );
        }
      };
      const clients = [client(), client(), client()];
      await new Promise((wait) => setTimeout(wait, 200));
      process.kill(before[0]!, 'SIGKILL');
      await untilTrue(async () => {
        const now = childPids(divan.child.pid!);
        return now.length === 2 && !now.includes(before[0]!);
      });
      // Serving once its requests carry a third request-id prefix.
      const prefixes = new Set<string>();
      await untilTrue(async () => {
        for (const res of await requestsFrom(url, '/', {}, 2)) prefixes.add(String(res.headers['x-couch-request-id']).slice(0, 6));
        return prefixes.size >= 2;
      });
      stop = true;
      await Promise.all(clients);
      assert.ok(failed <= clients.length, `${failed} failed requests, ${done} answered`);
      assert.ok(done > 0);
      assert.deepEqual(statuses(await everyWorker('/')), [200], 'the replacement answers');
      assert.equal(processAlive(before[0]!), false);
    });
  });
}

describe('two worker processes: start and stop', () => {
  test('with neither --workers nor [divan] workers set, the server runs one worker per core', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'divan-workers-default-'));
    try {
      writeFileSync(join(dir, 'local.ini'), `[admins]\n${ADMIN[0]} = ${ADMIN[1]}\n[chttpd_auth]\niterations = 1000\n`);
      const divan = await startDivan(['--port', '0', '--data', dir, '--config', join(dir, 'local.ini')], {}, { defaultWorkers: true });
      try {
        assert.equal(childPids(divan.child.pid!).length, availableParallelism());
        assert.equal((await request(divan.url, '/_up')).status, 200);
      } finally {
        assert.equal(await divan.stop(), 0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a port already taken stops the start with the worker\'s message and status 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'divan-workers-busy-'));
    const taken = createServer();
    await new Promise<void>((ready) => taken.listen(0, '127.0.0.1', ready));
    try {
      writeFileSync(join(dir, 'local.ini'), `[admins]\n${ADMIN[0]} = ${ADMIN[1]}\n[chttpd_auth]\niterations = 1000\n`);
      const port = String((taken.address() as AddressInfo).port);
      const run = await runDivan(['--port', port, '--workers', '2', '--data', dir, '--config', join(dir, 'local.ini')]);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /^Divan: port \d+ on 127.0.0.1 is already in use$/m);
      assert.doesNotMatch(run.stdout, /Divan listening/);
    } finally {
      taken.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the primary exits 0 once both workers drained and exited', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'divan-workers-stop-'));
    try {
      writeFileSync(join(dir, 'local.ini'), `[admins]\n${ADMIN[0]} = ${ADMIN[1]}\n[chttpd_auth]\niterations = 1000\n`);
      const divan = await startDivan(['--port', '0', '--workers', '2', '--data', dir, '--config', join(dir, 'local.ini')]);
      const workers = childPids(divan.child.pid!);
      assert.equal(workers.length, 2);
      // A long poll in flight ends with its last line when the server stops.
      const poll = request(divan.url, '/_users/_changes?feed=longpoll&since=now&timeout=30000', { auth: ADMIN });
      await new Promise((wait) => setTimeout(wait, 200));
      assert.equal(await divan.stop(), 0);
      assert.equal((await poll).status, 200);
      assert.deepEqual(workers.filter(processAlive), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
