/**
 * Issue 33 item 3: no request holds a worker. Against the real binary, a `_changes` feed that
 * filters thousands of documents with a costly `_selector` lets other clients through while it
 * runs, and stops once its client went away: the server counts that request as 499
 * (`client_closed_request`) in its status-code statistics, which it only does when the work itself
 * noticed and stopped. `_revs_diff`, read and compared a step at a time, answers every document in
 * order across steps.
 *
 * No bound here depends on the machine's speed: "lets others through" counts probes answered while
 * the feed is running; "stops" is observed through a counter.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { startDivan, type RunningDivan } from '../support/process.js';
import { sendRaw, type RawAnswer } from '../support/raw-request.js';

const ADMIN = 'long-admin:long-pass';
const DOCS = 8000;
const DB = 'long';

type Answer = RawAnswer;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A `$or` of 600 equalities no document matches: every document costs 600 comparisons. */
const SLOW_SELECTOR = { $or: Array.from({ length: 600 }, (_, i) => ({ v: -1 - i })) };

describe('issue 33 item 3: long requests yield and stop when their client leaves', () => {
  let node: RunningDivan;
  let dir: string;
  const send = (method: string, path: string, body?: unknown, onRequest?: (req: ClientRequest) => void): Promise<Answer> =>
    sendRaw(node.url, ADMIN, method, path, body, onRequest);

  /** Requests answered 499 so far (the server's own statistics). */
  const closedByClient = async (): Promise<number> => {
    const stats = await send('GET', '/_node/_local/_stats/couchdb/httpd_status_codes');
    assert.equal(stats.status, 200);
    return Number(stats.body?.['499']?.value ?? 0);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'divan-long-'));
    const configFile = join(dir, 'long.ini');
    writeFileSync(configFile, `[admins]\n${ADMIN.replace(':', ' = ')}\n[log]\nlevel = warning\n`);
    node = await startDivan(['--port', '0', '--data', dir, '--config', configFile]);
    assert.equal((await send('PUT', `/${DB}`)).status, 201);
    const docs = Array.from({ length: DOCS }, (_, i) => ({ _id: `d${String(i).padStart(5, '0')}`, v: i }));
    assert.equal((await send('POST', `/${DB}/_bulk_docs`, { docs })).status, 201);
  });
  after(async () => {
    await node?.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  test('issue 33 item 3: while a _changes feed filters thousands of documents with a costly _selector, another client is answered again and again', async (t) => {
    let pending = true;
    const heavy = send('POST', `/${DB}/_changes?filter=_selector`, { selector: SLOW_SELECTOR }).finally(() => (pending = false));
    let answeredMeanwhile = 0;
    while (pending) {
      const probe = await send('GET', `/${DB}/d00042`);
      assert.equal(probe.status, 200);
      if (pending) answeredMeanwhile++;
    }
    const answer = await heavy;
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.results, []);
    t.diagnostic(`${answeredMeanwhile} document reads answered during the feed`);
    assert.ok(answeredMeanwhile >= 5, `only ${answeredMeanwhile} reads were answered while the feed ran`);
  });

  test('issue 33 item 3: a filtering _changes feed whose client went away stops, counted as 499 client_closed_request', async () => {
    const before = await closedByClient();
    let sent: ClientRequest | undefined;
    const heavy = send('POST', `/${DB}/_changes?filter=_selector`, { selector: SLOW_SELECTOR }, (req) => (sent = req)).catch(() => undefined);
    await sleep(300);
    sent!.destroy();
    await heavy;
    // The feed notices at its next turn; ask until the counter moves (or give up after a minute).
    let after = before;
    for (let attempt = 0; attempt < 600 && after === before; attempt++) {
      await sleep(100);
      after = await closedByClient();
    }
    assert.equal(after, before + 1, 'the abandoned feed was not stopped as client_closed_request');
  });

  test('issue 33 item 3: a grouped JavaScript reduce whose client went away sends no more sandbox jobs, is counted as 499, and leaves the sandbox idle', async (t) => {
    // One group per document (group=true), each reduced by a call that loops a while: the rows' calls go to the sandbox in several jobs.
    const reduce = 'function (keys, values, rereduce) { var t = 0; for (var i = 0; i < 5000; i++) { t += i % 7; } return sum(values) + t * 0; }';
    assert.equal((await send('PUT', `/${DB}/_design/slow`, { views: { by_v: { map: 'function (doc) { emit(doc.v, 1); }', reduce } } })).status, 201);
    const path = `/${DB}/_design/slow/_view/by_v?group=true`;
    const sandbox = async (): Promise<{ jobs: number; busy: number; queued: number }> => {
      const stats = await send('GET', '/_node/_local/_stats/divan/js');
      assert.equal(stats.status, 200);
      return { jobs: Number(stats.body?.jobs?.value ?? -1), busy: Number(stats.body?.busy_workers?.value ?? -1), queued: Number(stats.body?.queued_jobs?.value ?? -1) };
    };
    // The first query builds the index and stores the block reductions; the second one costs what every later one does.
    const built = await send('GET', path);
    assert.equal(built.status, 200);
    assert.equal(built.body.rows.length, DOCS);
    const start = (await sandbox()).jobs;
    assert.equal((await send('GET', path)).status, 200);
    const whole = (await sandbox()).jobs - start;
    t.diagnostic(`a whole query: ${whole} sandbox jobs`);
    assert.ok(whole >= 4, `a whole query took ${whole} sandbox jobs: too few to stop one in the middle`);

    const closedBefore = await closedByClient();
    const before = (await sandbox()).jobs;
    let sent: ClientRequest | undefined;
    const abandoned = send('GET', path, undefined, (req) => (sent = req)).catch(() => undefined);
    // Leave once the query's first job was answered: the rest is still to do.
    for (let attempt = 0; attempt < 6000 && (await sandbox()).jobs === before; attempt++) await sleep(10);
    sent!.destroy();
    await abandoned;
    let closedAfter = closedBefore;
    for (let attempt = 0; attempt < 600 && closedAfter === closedBefore; attempt++) {
      await sleep(100);
      closedAfter = await closedByClient();
    }
    assert.equal(closedAfter, closedBefore + 1, 'the abandoned reduce was not stopped as client_closed_request');
    const idle = await sandbox();
    t.diagnostic(`the abandoned query: ${idle.jobs - before} sandbox jobs`);
    assert.ok(idle.jobs - before < whole, `the abandoned query ran ${idle.jobs - before} sandbox jobs, a whole one ${whole}`);
    assert.equal(idle.busy, 0, 'no sandbox worker still busy');
    assert.equal(idle.queued, 0, 'no sandbox job still waiting');
  });

  test('issue 33 item 3: _revs_diff of more documents than one step reads answers each of them, in order', async () => {
    const asked: Record<string, string[]> = {};
    for (let i = 0; i < 2500; i++) asked[`d${String(i * 3).padStart(5, '0')}`] = ['1-0123456789abcdef0123456789abcdef'];
    asked['absent'] = ['1-00000000000000000000000000000000'];
    const answer = await send('POST', `/${DB}/_revs_diff`, asked);
    assert.equal(answer.status, 200);
    const ids = Object.keys(answer.body);
    assert.equal(ids.length, 2501);
    assert.deepEqual(ids, Object.keys(asked));
    const existing = answer.body['d07497'];
    assert.deepEqual(existing.missing, ['1-0123456789abcdef0123456789abcdef']);
    assert.equal(existing.possible_ancestors, undefined);
    assert.deepEqual(answer.body['absent'], { missing: ['1-00000000000000000000000000000000'] });
  });
});
