import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { BACKENDS, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../support/backends.js';
import { request, type HttpOptions, type HttpResponse } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';
import { childPids, pinnedToEachWorker, untilTrue, type PinnedClient } from '../support/workers.js';

const ADMIN: [string, string] = ['boss', 'b0ss-pass'];

const taskIds = (res: HttpResponse): string[] => (res.body as { type: string; replication_id: string }[]).filter((task) => task.type === 'replication').map((task) => task.replication_id);
const jobIds = (res: HttpResponse): string[] => (res.body.jobs as { id: string }[]).map((job) => job.id);

for (const backend of BACKENDS.map((each) => each.name)) {
  describe(`two worker processes on ${backend}: node-wide answers come from both`, () => {
    let dir: string;
    let divan: RunningDivan;
    let url: string;
    /** One kept-alive connection to each worker. */
    let workers: PinnedClient[];
    const schema = uniqueSchema();
    const asAdmin = (options: HttpOptions = {}): HttpOptions => ({ ...options, auth: ADMIN });
    /** The same request through each worker, in turn. */
    const fromEach = async (path: string, options: HttpOptions = {}): Promise<HttpResponse[]> => {
      const responses: HttpResponse[] = [];
      for (const worker of workers) responses.push(await worker.request(path, asAdmin(options)));
      return responses;
    };
    const dbUrl = (db: string): string => {
      const at = new URL(`/${db}`, url);
      [at.username, at.password] = ADMIN;
      return at.href;
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'divan-gather-'));
      const storage = backend === 'postgres' ? ['storage = postgres', `postgres_schema = ${schema}`] : [];
      // Connections stay with their worker for the whole test.
      const ini = ['[divan]', ...storage, 'keepalive_timeout = 600000', '[admins]', `${ADMIN[0]} = ${ADMIN[1]}`, '[chttpd_auth]', 'iterations = 1000', '[log]', 'level = warning', ''];
      writeFileSync(join(dir, 'local.ini'), ini.join('\n'));
      const env: Record<string, string> = backend === 'postgres' ? { DIVAN_POSTGRES_URL: POSTGRES_TEST_URL! } : {};
      divan = await startDivan(['--port', '0', '--workers', '2', '--data', dir, '--config', join(dir, 'local.ini')], env);
      url = divan.url;
      workers = await pinnedToEachWorker(url, 2);
      for (const db of ['source', 'docs-source']) assert.equal((await request(url, `/${db}`, asAdmin({ method: 'PUT' }))).status, 201);
      assert.equal((await request(url, '/source/a', asAdmin({ method: 'PUT', body: { n: 1 } }))).status, 201);
    });

    after(async () => {
      for (const worker of workers ?? []) worker.close();
      assert.equal(await divan.stop(), 0);
      rmSync(dir, { recursive: true, force: true });
      if (backend === 'postgres') await dropSchema(POSTGRES_TEST_URL!, schema);
    });

    test('a continuous replication started through one worker is listed by both and cancelled through the other', async () => {
      const [starter, other] = workers as [PinnedClient, PinnedClient];
      const body = { source: dbUrl('source'), target: dbUrl('target'), continuous: true, create_target: true };
      const started = await starter.request('/_replicate', asAdmin({ method: 'POST', body }));
      assert.equal(started.status, 202, started.text);
      const id: string = started.body._local_id;
      await untilTrue(async () => (await fromEach('/_active_tasks')).every((res) => taskIds(res).includes(id)));
      for (const res of await fromEach('/_scheduler/jobs')) assert.deepEqual(jobIds(res), [id], 'listed once, by every worker');
      for (const res of await fromEach('/_active_tasks')) {
        for (const task of res.body) assert.match(task.pid, /^<0\.\d+\.[1-9]\d*>$/, "the worker's number in the pid keeps pids unique");
      }
      for (const res of await fromEach(`/_scheduler/jobs/${encodeURIComponent(id)}`)) assert.equal(res.body.id, id);
      const again = await other.request('/_replicate', asAdmin({ method: 'POST', body }));
      assert.deepEqual([again.status, again.body._local_id], [202, id]);
      for (const res of await fromEach('/_active_tasks')) assert.deepEqual(taskIds(res), [id], 'the same job posted again does not start a second run');

      const cancelled = await other.request('/_replicate', asAdmin({ method: 'POST', body: { replication_id: id, cancel: true } }));
      assert.deepEqual([cancelled.status, cancelled.body], [200, { ok: true, _local_id: id }]);
      for (const res of await fromEach('/_scheduler/jobs')) assert.deepEqual(jobIds(res), []);
      for (const res of await fromEach('/_active_tasks')) assert.deepEqual(taskIds(res), []);
      const missing = await starter.request('/_replicate', asAdmin({ method: 'POST', body: { ...body, cancel: true } }));
      assert.deepEqual([missing.status, missing.body], [404, { error: 'not found' }]);
    });

    test("a _replicator document's job shows its real state from both workers", async () => {
      const node = (await request(url, '/_node/_local', asAdmin())).body.name;
      const doc = { source: dbUrl('docs-source'), target: dbUrl('docs-target'), continuous: true, create_target: true };
      assert.equal((await request(url, '/_replicator/live', asAdmin({ method: 'PUT', body: doc }))).status, 201);
      await untilTrue(async () => (await fromEach('/_scheduler/docs/_replicator/live')).every((res) => res.status === 200 && typeof res.body.id === 'string'));
      const rows = (await fromEach('/_scheduler/docs/_replicator/live')).map((res) => res.body);
      for (const row of rows) {
        assert.equal(row.state, 'running');
        assert.equal(row.node, node);
        assert.equal(row.source, new URL('/docs-source/', url).href, 'the source without credentials');
        assert.ok('docs_written' in row.info, JSON.stringify(row.info));
      }
      assert.equal(new Set(rows.map((row) => row.id)).size, 1);
      for (const res of await fromEach('/_scheduler/docs')) assert.deepEqual(res.body.docs.map((row: { doc_id: string }) => row.doc_id), ['live']);
      for (const res of await fromEach('/_scheduler/jobs')) assert.deepEqual(jobIds(res), [rows[0].id]);
      const rev = (await request(url, '/_replicator/live', asAdmin())).body._rev;
      assert.equal((await request(url, `/_replicator/live?rev=${rev}`, asAdmin({ method: 'DELETE' }))).status, 200);
      await untilTrue(async () => (await fromEach('/_scheduler/jobs')).every((res) => jobIds(res).length === 0));
    });

    test('_stats, _prometheus and _system sum over both workers', async () => {
      const stats = async (worker: PinnedClient): Promise<number> => (await worker.request('/_node/_local/_stats/couchdb/httpd_status_codes/405', asAdmin())).body.value;
      const scraped = async (worker: PinnedClient): Promise<number> => {
        const families = parsePrometheusTextFormat((await worker.request('/_node/_local/_prometheus', asAdmin())).text);
        const codes = families.find((family) => family.name === 'couchdb_httpd_status_codes')!;
        return Number(codes.metrics.find((metric) => metric.labels?.['code'] === '405')?.value);
      };
      const before = await stats(workers[0]!);
      // Three refused methods through one worker, two through the other.
      for (const [worker, count] of [[workers[0]!, 3], [workers[1]!, 2]] as const) {
        for (let i = 0; i < count; i++) assert.equal((await worker.request('/_up', { method: 'PUT' })).status, 405);
      }
      for (const worker of workers) {
        assert.equal(await stats(worker), before + 5);
        assert.equal(await scraped(worker), before + 5);
      }
      for (const res of await fromEach('/_node/_local/_system')) {
        // The two workers and their two heavy-lane processes (docs/workers.md).
        assert.equal(res.body.process_count, 4);
        assert.ok(res.body.uptime < 600, 'the uptime is the oldest worker\'s, not a sum');
      }
    });

    test('a worker killed while it is asked does not hold _active_tasks up', async () => {
      const [victim] = childPids(divan.child.pid!);
      // Stopped, it cannot answer: the gather waits for it until it dies.
      process.kill(victim!, 'SIGSTOP');
      const asked = Date.now();
      const answers = workers.map((worker) => worker.request('/_active_tasks', asAdmin()).then((res) => ({ res, ms: Date.now() - asked })));
      await new Promise((wait) => setTimeout(wait, 300));
      process.kill(victim!, 'SIGKILL');
      const settled = await Promise.allSettled(answers);
      const answered = settled.flatMap((each) => (each.status === 'fulfilled' ? [each.value] : []));
      assert.equal(answered.length, 1, 'the live worker answers; the killed one cannot');
      assert.equal(answered[0]!.res.status, 200, answered[0]!.res.text);
      // Below the gather's 5 s time limit, with room for a busy machine.
      assert.ok(answered[0]!.ms < 4500, `answered ${answered[0]!.ms} ms after the question, not at the gather's time limit`);
      assert.match(divan.stderr(), /w\d+ exited before it answered active_tasks: left out/);
      // The replacement answers too, once it started.
      await untilTrue(async () => childPids(divan.child.pid!).length === 2 && !childPids(divan.child.pid!).includes(victim!), 20000);
      const prefixes = new Set<string>();
      await untilTrue(async () => {
        const res = await request(url, '/_active_tasks', asAdmin());
        assert.equal(res.status, 200, res.text);
        prefixes.add(String(res.headers['x-couch-request-id']).slice(0, 6));
        return prefixes.size >= 2;
      }, 20000);
    });
  });
}

describe('two worker processes share the node\'s [replicator] max_jobs', () => {
  test('with max_jobs = 2, a worker runs one job and keeps its next one pending', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'divan-max-jobs-'));
    const ini = ['[divan]', 'keepalive_timeout = 600000', '[admins]', `${ADMIN[0]} = ${ADMIN[1]}`, '[chttpd_auth]', 'iterations = 1000', '[replicator]', 'max_jobs = 2', '[log]', 'level = warning', ''];
    writeFileSync(join(dir, 'local.ini'), ini.join('\n'));
    const divan = await startDivan(['--port', '0', '--workers', '2', '--data', dir, '--config', join(dir, 'local.ini')]);
    const workers = await pinnedToEachWorker(divan.url, 2);
    try {
      const auth = { auth: ADMIN };
      const dbUrl = (db: string): string => Object.assign(new URL(`/${db}`, divan.url), { username: ADMIN[0], password: ADMIN[1] }).href;
      for (const db of ['one', 'two']) assert.equal((await request(divan.url, `/${db}`, { ...auth, method: 'PUT' })).status, 201);
      const starter = workers[0]!;
      for (const db of ['one', 'two']) {
        const body = { source: dbUrl(db), target: dbUrl(`${db}-copy`), continuous: true, create_target: true };
        assert.equal((await starter.request('/_replicate', { ...auth, method: 'POST', body })).status, 202);
      }
      // CouchDB's _scheduler/jobs rows name no state: a running job has a pid, a pending one null.
      const states = async (): Promise<string[]> =>
        ((await workers[1]!.request('/_scheduler/jobs', auth)).body.jobs as { pid: string | null }[]).map((job) => (job.pid === null ? 'pending' : 'running')).sort();
      await untilTrue(async () => (await states()).includes('running'));
      // Give a wrongly started second job time to show up as running too.
      await new Promise((wait) => setTimeout(wait, 500));
      assert.deepEqual(await states(), ['pending', 'running'], "the worker's share of max_jobs is 1");
    } finally {
      for (const worker of workers) worker.close();
      assert.equal(await divan.stop(), 0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
