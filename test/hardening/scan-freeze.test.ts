/**
 * Security issue 32 item 3: one `_find` held a server process for a minute (a `$or` of a 4 990-value
 * `$in` and an `$elemMatch` of a 4 000-value `$in` over 20 000 documents). Against the real binary:
 * `$in` lists are matched in constant time per value, a long scan lets other clients through, a
 * scan whose client went away stops, and a scan past `[mango] max_docs_examined` is refused.
 *
 * No bound here depends on the machine's speed: "lets others through" counts probes answered while
 * the scan is running; "stops" compares the server's CPU time with the wall time of an idle window;
 * "constant time" compares with a plain scan of the same documents, measured in the same test.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { startDivan, type RunningDivan } from '../support/process.js';
import { sendRaw, type RawAnswer } from '../support/raw-request.js';

const ADMIN = 'scan-admin:scan-pass';
const DOCS = 8000;
const DB = 'scans';

type Answer = RawAnswer;

/** CPU seconds (user + system) the process has used so far (Linux /proc). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A `$or` of 4 990 equalities no document matches: every document costs 4 990 comparisons. */
const SLOW_SELECTOR = { $or: Array.from({ length: 4990 }, (_, i) => ({ v: -1 - i })) };
/** The same over the first 600 documents (an `_id` range of `_all_docs`). */
const SLOW_RANGE_SELECTOR = { _id: { $lt: 'd00600' }, ...SLOW_SELECTOR };

describe('issue 32 item 3: no _find holds a server process', () => {
  let node: RunningDivan;
  let dir: string;
  const send = (method: string, path: string, body?: unknown, onRequest?: (req: ClientRequest) => void): Promise<Answer> =>
    sendRaw(node.url, ADMIN, method, path, body, onRequest);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'divan-scans-'));
    const configFile = join(dir, 'scans.ini');
    writeFileSync(configFile, `[admins]\n${ADMIN.replace(':', ' = ')}\n[log]\nlevel = warning\n`);
    node = await startDivan(['--port', '0', '--data', dir, '--config', configFile]);
    assert.equal((await send('PUT', `/${DB}`)).status, 201);
    const docs = Array.from({ length: DOCS }, (_, i) => ({ _id: `d${String(i).padStart(5, '0')}`, v: i, tags: Array.from({ length: 10 }, (__, k) => `t${(i + k) % 13}`) }));
    assert.equal((await send('POST', `/${DB}/_bulk_docs`, { docs })).status, 201);
  });
  after(async () => {
    await node?.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  test('issue 32 item 3: the scanner $or of a 4 990-value $in and an $elemMatch of a 4 000-value $in costs about what a plain scan costs', async (t) => {
    // The second of two plain scans: the first warms the caches.
    let plainMs = 0;
    for (let round = 0; round < 2; round++) {
      const plainStarted = performance.now();
      assert.equal((await send('POST', `/${DB}/_find`, { selector: { v: -1 } })).status, 200);
      plainMs = performance.now() - plainStarted;
    }
    const selector = {
      $or: [{ v: { $in: Array.from({ length: 4990 }, (_, i) => -1 - i) } }, { tags: { $elemMatch: { $in: Array.from({ length: 4000 }, (_, i) => `x${i}`) } } }],
    };
    const started = performance.now();
    const answer = await send('POST', `/${DB}/_find`, { selector });
    const ms = performance.now() - started;
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.docs, []);
    // Comparing each value with every argument took minutes; hashing it, about a plain scan.
    t.diagnostic(`$in scan ${ms.toFixed(0)} ms, plain scan ${plainMs.toFixed(0)} ms`);
    assert.ok(ms < Math.max(2000, 10 * plainMs), `the $in scan took ${ms.toFixed(0)} ms, a plain scan ${plainMs.toFixed(0)} ms`);
  });

  test('issue 32 item 3: while a long _find scans, another client is answered again and again', async (t) => {
    let pending = true;
    const heavy = send('POST', `/${DB}/_find`, { selector: SLOW_RANGE_SELECTOR }).finally(() => (pending = false));
    let answeredMeanwhile = 0;
    while (pending) {
      const probe = await send('GET', '/_up');
      assert.equal(probe.status, 200);
      if (pending) answeredMeanwhile++;
    }
    const answer = await heavy;
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.docs, []);
    t.diagnostic(`${answeredMeanwhile} probes answered during the scan`);
    assert.ok(answeredMeanwhile >= 5, `only ${answeredMeanwhile} probes were answered while the scan ran`);
  });

  test('issue 32 item 3: a _find whose client went away stops scanning', async () => {
    let sent: ClientRequest | undefined;
    const heavy = send('POST', `/${DB}/_find`, { selector: SLOW_SELECTOR }, (req) => (sent = req)).catch(() => undefined);
    await sleep(300);
    sent!.destroy();
    await heavy;
    await sleep(200);
    const cpuBefore = cpuSeconds(node.child.pid!);
    const wallBefore = performance.now();
    await sleep(1000);
    const cpu = cpuSeconds(node.child.pid!) - cpuBefore;
    const wall = (performance.now() - wallBefore) / 1000;
    // A scan still running would keep the process busy for most of the window.
    assert.ok(cpu < 0.3 * wall, `the server used ${cpu.toFixed(2)} s of CPU in ${wall.toFixed(2)} s after its client left`);
    assert.equal((await send('GET', '/_up')).status, 200);
  });

  test('issue 32 item 3: past [mango] max_docs_examined a _find is answered 400 too_many_docs_examined; one that finds its page sooner is not', async () => {
    const setting = `/_node/_local/_config/mango/max_docs_examined`;
    assert.equal((await send('PUT', setting, '100')).status, 200);
    try {
      const refused = await send('POST', `/${DB}/_find`, { selector: { v: -5 } });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error, 'too_many_docs_examined');
      assert.match(refused.body.reason, /100 documents/);
      const early = await send('POST', `/${DB}/_find`, { selector: { v: 3 }, limit: 1 });
      assert.equal(early.status, 200);
      assert.deepEqual(early.body.docs.map((doc: { _id: string }) => doc._id), ['d00003']);
    } finally {
      await send('DELETE', setting);
    }
  });
});
