// One node's view whatever the worker count: statistics totals, replication jobs and tasks as
// CouchDB 3.5 fills them, and max_jobs_per_user counted over the node, asked over new connections.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { BACKENDS, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../support/backends.js';
import { request, type HttpOptions, type HttpResponse } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';
import { pinnedToEachWorker, requestsFrom, untilTrue, type PinnedClient } from '../support/workers.js';

const ADMIN: [string, string] = ['boss', 'b0ss-pass'];
const BOB: [string, string] = ['bob', 'bob-pass'];
/** Each question is asked this many times, each over a new connection (so of every worker). */
const ASKED = 6;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

for (const backend of BACKENDS.map((each) => each.name)) {
  describe(`two worker processes on ${backend} answer as one node`, () => {
    const schema = uniqueSchema();
    let dir: string;
    let divan: RunningDivan;
    let url: string;
    let workers: PinnedClient[];
    const admin = (options: HttpOptions = {}): HttpOptions => ({ ...options, auth: ADMIN });
    const call = (path: string, options: HttpOptions = {}): Promise<HttpResponse> => request(url, path, admin(options));
    /** The same question over ASKED new connections. */
    const askedOften = (path: string): Promise<HttpResponse[]> => requestsFrom(url, path, admin(), ASKED);
    const dbUrl = (db: string): string => Object.assign(new URL(`/${db}`, url), { username: ADMIN[0], password: ADMIN[1] }).href;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'divan-node-view-'));
      const storage = backend === 'postgres' ? ['storage = postgres', `postgres_schema = ${schema}`] : [];
      const ini = ['[divan]', ...storage, 'keepalive_timeout = 600000', '[admins]', `${ADMIN[0]} = ${ADMIN[1]}`, '[chttpd_auth]', 'iterations = 1000',
        '[chttpd_auth_lockout]', 'mode = off', '[replicator]', 'max_jobs_per_user = 2', '[log]', 'level = warning', ''];
      writeFileSync(join(dir, 'local.ini'), ini.join('\n'));
      const env: Record<string, string> = backend === 'postgres' ? { DIVAN_POSTGRES_URL: POSTGRES_TEST_URL! } : {};
      divan = await startDivan(['--port', '0', '--workers', '2', '--data', dir, '--config', join(dir, 'local.ini')], env);
      url = divan.url;
      workers = await pinnedToEachWorker(url, 2);
    });

    after(async () => {
      for (const worker of workers ?? []) worker.close();
      assert.equal(await divan.stop(), 0);
      rmSync(dir, { recursive: true, force: true });
      if (backend === 'postgres') await dropSchema(POSTGRES_TEST_URL!, schema);
    });

    test('_stats and a Prometheus scrape count every request the node served, asked of any worker', async () => {
      const counted = async (): Promise<number[]> => (await askedOften('/_node/_local/_stats/couchdb/httpd_request_methods/DELETE')).map((res) => res.body.value ?? 0);
      const scraped = async (): Promise<number[]> =>
        (await askedOften('/_node/_local/_prometheus')).map((res) => {
          const family = parsePrometheusTextFormat(res.text).find((each) => each.name === 'couchdb_httpd_request_methods');
          return Number(family?.metrics.find((metric) => metric.labels?.['method'] === 'DELETE')?.value ?? 0);
        });
      const before = await counted();
      assert.equal(new Set(before).size, 1, `every worker answers the same count: ${before}`);
      const sent = 9;
      for (const res of await requestsFrom(url, '/no-such-db', { method: 'DELETE', auth: ADMIN }, sent)) assert.equal(res.status, 404);
      assert.deepEqual(await counted(), Array(ASKED).fill(before[0]! + sent));
      assert.deepEqual(await scraped(), Array(ASKED).fill(before[0]! + sent));
    });

    test("a one-shot _replicator document's row shows its end as CouchDB does, from every worker", async () => {
      assert.equal((await call('/once-src', { method: 'PUT' })).status, 201);
      const docs = Array.from({ length: 5 }, (_, n) => ({ _id: `d${n}` }));
      assert.equal((await call('/once-src/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
      const doc = { source: dbUrl('once-src'), target: { url: dbUrl('once-dst'), headers: { 'X-Note': 'kept' } }, create_target: true };
      assert.equal((await call('/_replicator/once', { method: 'PUT', body: doc })).status, 201);
      await untilTrue(async () => (await call('/_scheduler/docs/_replicator/once')).body.state === 'completed');
      for (const res of await askedOften('/_scheduler/docs/_replicator/once')) {
        const row = res.body;
        assert.equal(row.state, 'completed', res.text);
        assert.equal(row.source, new URL('/once-src/', url).href, 'the source URL without credentials');
        assert.equal(row.target, new URL('/once-dst/', url).href, 'the target URL without credentials');
        assert.match(row.start_time, ISO);
        assert.match(row.last_updated, ISO);
        assert.equal(row.error_count, 0);
        assert.equal(row.info.docs_written, 5);
        assert.equal(row.info.changes_pending, 0, 'nothing is pending once the job completed');
        assert.equal(row.info.start_time, undefined, 'start_time is the row\'s, not in info');
      }
    });

    test('a continuous job: _active_tasks and _scheduler/jobs show its counters as it runs, from every worker', async () => {
      assert.equal((await call('/live-src', { method: 'PUT' })).status, 201);
      const started = await workers[0]!.request('/_replicate', admin({ method: 'POST', body: { source: dbUrl('live-src'), target: dbUrl('live-dst'), continuous: true, create_target: true } }));
      assert.equal(started.status, 202, started.text);
      const id: string = started.body._local_id;
      const task = (res: HttpResponse) => (res.body as { replication_id?: string }[]).find((each) => each.replication_id === id) as Record<string, any> | undefined;
      await untilTrue(async () => task(await call('/_active_tasks')) !== undefined);
      assert.equal((await call('/live-src/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }] } })).status, 201);
      await untilTrue(async () => task(await call('/_active_tasks'))?.['docs_written'] === 3);
      for (const res of await askedOften('/_active_tasks')) {
        const shown = task(res);
        assert.ok(shown, `every worker lists the job: ${res.text}`);
        assert.equal(shown['continuous'], true);
        assert.equal(shown['source'], new URL('/live-src/', url).href);
        for (const field of ['docs_read', 'docs_written', 'doc_write_failures', 'revisions_checked', 'missing_revisions_found']) assert.equal(typeof shown[field], 'number', field);
        assert.deepEqual([shown['docs_read'], shown['docs_written'], shown['changes_pending']], [3, 3, 0]);
        assert.equal(String(shown['through_seq']).split('-')[0], '3');
      }
      for (const res of await askedOften(`/_scheduler/jobs/${encodeURIComponent(id)}`)) {
        assert.equal(res.body.id, id);
        assert.match(res.body.start_time, ISO);
        assert.equal(res.body.info.docs_written, 3);
        assert.deepEqual(res.body.history.map((event: { type: string }) => event.type), ['started', 'added']);
      }
      assert.equal((await call('/_replicate', { method: 'POST', body: { replication_id: id, cancel: true } })).status, 200);
    });

    test('[replicator] max_jobs_per_user is counted over the node, not per worker', async () => {
      const user = await call(`/_users/org.couchdb.user:${BOB[0]}`, { method: 'PUT', body: { name: BOB[0], password: BOB[1], roles: [], type: 'user' } });
      assert.equal(user.status, 201, user.text);
      const members = { admins: { names: [], roles: [] }, members: { names: [BOB[0]], roles: [] } };
      for (const db of ['bob-src', 'bob-1', 'bob-2', 'bob-3', 'bob-4']) {
        assert.equal((await call(`/${db}`, { method: 'PUT' })).status, 201);
        assert.equal((await call(`/${db}/_security`, { method: 'PUT', body: members })).status, 200);
      }
      const post = (worker: PinnedClient, target: string) => worker.request('/_replicate', { method: 'POST', auth: BOB, body: { source: 'bob-src', target, continuous: true } });
      // Two through one worker: more than half the cap in one worker is allowed ...
      for (const target of ['bob-1', 'bob-2']) assert.equal((await post(workers[0]!, target)).status, 202);
      // ... and the node's third is refused by the other worker, which runs none of them.
      const third = await post(workers[1]!, 'bob-3');
      assert.equal(third.status, 429, third.text);
      assert.equal(third.body.error, 'too_many_jobs');
      const jobs = (await call('/_scheduler/jobs')).body.jobs as { id: string; user: string }[];
      const bobs = jobs.filter((job) => job.user === BOB[0]);
      assert.equal(bobs.length, 2);
      for (const job of bobs) assert.equal((await call('/_replicate', { method: 'POST', body: { replication_id: job.id, cancel: true } })).status, 200);

      // Twelve at once, six through each worker, on fresh connections so none waits behind another in
      // its socket: admissions take turns under the node's lock, so exactly the cap is admitted (without
      // the lock, the requests that count before either admission lands are all admitted).
      const targets = Array.from({ length: 12 }, (_, n) => `bob-many-${n}`);
      for (const db of targets) {
        assert.equal((await call(`/${db}`, { method: 'PUT' })).status, 201);
        assert.equal((await call(`/${db}/_security`, { method: 'PUT', body: members })).status, 200);
      }
      const fresh = (target: string) => request(url, '/_replicate', { method: 'POST', auth: BOB, body: { source: 'bob-src', target, continuous: true } });
      const answers = await Promise.all(targets.map(fresh));
      assert.deepEqual(answers.map((res) => res.status).sort(), [...Array(2).fill(202), ...Array(10).fill(429)], answers.map((res) => res.text).join());
      const running = ((await call('/_scheduler/jobs')).body.jobs as { id: string; user: string }[]).filter((job) => job.user === BOB[0]);
      assert.equal(running.length, 2);
      for (const job of running) assert.equal((await call('/_replicate', { method: 'POST', body: { replication_id: job.id, cancel: true } })).status, 200);
    });
  });
}
