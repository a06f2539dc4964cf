// The heavy lane (docs/workers.md): beside two serving workers, two lane processes at nice 10; a
// request whose loops held a serving worker for several turns is answered by the lane the next
// times its method and URL come, with the same answer and the same caller.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as rawRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request, type HttpOptions, type HttpResponse } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';
import { childPids, requestsFrom, untilTrue } from '../support/workers.js';

const ADMIN: [string, string] = ['boss', 'b0ss-pass'];
const DOCS = 20_000;
const ROUNDS = 8;

/** Which process answered: the request-id prefix is random per process. */
const answerer = (res: HttpResponse): string => String(res.headers['x-couch-request-id']).slice(0, 6);

/** The nice value of every thread of a process (field 19 of /proc/PID/task/TID/stat). */
function threadNice(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe('the heavy lane: requests that held a worker are answered at a lower CPU priority', () => {
  let dir: string;
  let divan: RunningDivan;
  let url: string;
  /** The request-id prefixes of the two serving workers. */
  let serving: Set<string>;
  const admin = (path: string, options: HttpOptions = {}): Promise<HttpResponse> => request(url, path, { auth: ADMIN, ...options });
  const setSlices = async (value: string): Promise<void> => {
    assert.equal((await admin('/_node/_local/_config/divan/heavy_lane_slices', { method: 'PUT', body: JSON.stringify(value) })).status, 200);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'divan-lane-'));
    writeFileSync(join(dir, 'local.ini'), ['[admins]', `${ADMIN[0]} = ${ADMIN[1]}`, '[chttpd_auth]', 'iterations = 1000', '[divan]', 'heavy_lane_slices = 1', '[log]', 'level = warning', ''].join('\n'));
    divan = await startDivan(['--port', '0', '--workers', '2', '--data', dir, '--config', join(dir, 'local.ini')]);
    url = divan.url;
    serving = new Set((await requestsFrom(url, '/', {}, ROUNDS)).map(answerer));
    assert.equal(serving.size, 2, 'both serving workers answer the port');
  });

  after(async () => {
    assert.equal(await divan.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  });

  test('as many lane processes as workers, every thread of them at nice 10, the workers not', async () => {
    const lanes = childPids(divan.child.pid!, { lanes: true });
    assert.equal(lanes.length, 2);
    // A lane lowers its priority as its first step, which a loaded machine may not have reached yet.
    await untilTrue(async () => lanes.every((pid) => threadNice(pid).every((nice) => nice === 10)));
    for (const pid of lanes) assert.deepEqual([...new Set(threadNice(pid))], [10], `lane ${pid}`);
    for (const pid of childPids(divan.child.pid!)) assert.ok(!threadNice(pid).includes(10), `worker ${pid}`);
  });

  test('a full-scan _find that held a worker is answered by the lane the next times, with the same answer', async () => {
    assert.equal((await admin('/scan', { method: 'PUT' })).status, 201);
    for (let start = 0; start < DOCS; start += 5000) {
      const docs = Array.from({ length: 5000 }, (_, i) => ({ _id: `d${String(start + i).padStart(6, '0')}`, n: start + i, text: 'x'.repeat(40) }));
      assert.equal((await admin('/scan/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    }
    // Every document is read and matched (none matches the first clause), then the last one.
    const find = { method: 'POST', body: { selector: { $or: [{ n: { $lt: 0 } }, { n: DOCS - 1 }] }, fields: ['_id'] } } as const;
    const answers = await requestsFrom(url, '/scan/_find', { auth: ADMIN, ...find }, ROUNDS);
    for (const res of answers) assert.deepEqual(res.body.docs, [{ _id: `d${String(DOCS - 1).padStart(6, '0')}` }]);
    const lanes = answers.map(answerer).filter((who) => !serving.has(who));
    // Each serving worker answers the first one it gets itself, and forwards the later ones.
    assert.ok(lanes.length >= ROUNDS - 2, `answered by ${answers.map(answerer).join(', ')}; serving ${[...serving].join(', ')}`);
    // A light request is never forwarded.
    assert.ok((await requestsFrom(url, '/scan/d000001', { auth: ADMIN }, 4)).every((res) => serving.has(answerer(res))));
  });

  test('a forwarded request keeps its caller, its body and its answer headers', async () => {
    // Every request counts as heavy: the second time a method and URL come to a worker, the lane answers.
    await setSlices('0');
    try {
      const login = await request(url, '/_session', { method: 'POST', body: { name: ADMIN[0], password: ADMIN[1] } });
      const cookie = String([login.headers['set-cookie']].flat()[0]).split(';')[0]!;
      const sessions = await requestsFrom(url, '/_session', { headers: { Cookie: cookie, 'X-Divan-Lane-Token': 'forged', 'X-Divan-Lane-Peer': '10.9.8.7' } }, ROUNDS);
      assert.ok(sessions.some((res) => !serving.has(answerer(res))), 'the lane answered some');
      for (const res of sessions) assert.equal(res.body.userCtx.name, ADMIN[0]);
      const anonymous = await requestsFrom(url, '/_session', {}, ROUNDS);
      for (const res of anonymous) assert.equal(res.body.userCtx.name, null);
      const puts: HttpResponse[] = [];
      for (let i = 0; i < ROUNDS; i++) puts.push(await admin('/scan/forwarded', { method: 'PUT', body: i === 0 ? { v: i } : { v: i, _rev: puts[i - 1]!.body.rev } }));
      assert.ok(puts.some((res) => !serving.has(answerer(res))), 'the lane answered some writes');
      for (const res of puts) {
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers['etag'], `"${res.body.rev as string}"`);
        assert.match(String(res.headers['location']), /\/scan\/forwarded$/);
      }
      assert.equal((await admin('/scan/forwarded')).body.v, ROUNDS - 1);
    } finally {
      await setSlices('3');
    }
  });

  test('a client that leaves a forwarded request does not turn the lane off', async () => {
    const path = '/scan/_find?left=1';
    const body = { selector: { n: { $lt: 0 } } };
    const send = (): Promise<HttpResponse> => admin(path, { method: 'POST', body });
    // Marked heavy on both workers, then sent and dropped while the lane scans.
    for (let i = 0; i < ROUNDS; i++) await send();
    for (let i = 0; i < 4; i++) {
      await new Promise<void>((done) => {
        const auth = Buffer.from(ADMIN.join(':')).toString('base64');
        const out = rawRequest(new URL(path, url), { method: 'POST', headers: { Authorization: `Basic ${auth}`, 'Content-Type': 'application/json' } });
        out.on('error', () => done());
        out.end(JSON.stringify(body));
        setTimeout(() => (out.destroy(), done()), 5);
      });
    }
    const after = await requestsFrom(url, path, { auth: ADMIN, method: 'POST', body }, ROUNDS);
    assert.deepEqual([...new Set(after.map((res) => res.status))], [200]);
    assert.ok(after.some((res) => !serving.has(answerer(res))), `answered by ${after.map(answerer).join(', ')}`);
  });

  test('with its lane processes killed, every request is still answered', async () => {
    await setSlices('0');
    try {
      for (const pid of childPids(divan.child.pid!, { lanes: true })) process.kill(pid, 'SIGKILL');
      const answers = await requestsFrom(url, '/_all_dbs', { auth: ADMIN }, ROUNDS);
      assert.deepEqual([...new Set(answers.map((res) => res.status))], [200]);
      // The primary starts new lane processes.
      await untilTrue(async () => childPids(divan.child.pid!, { lanes: true }).length === 2);
    } finally {
      await setSlices('3');
    }
  });
});
