import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request, type HttpResponse } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';
import { childPids, untilTrue, withTimeout } from '../support/workers.js';

/**
 * Writes and view builds on SQLite with two worker processes sharing the file: the write lease and
 * the view-updater locks the primary grants (docs/workers.md).
 */
const ADMIN: [string, string] = ['boss', 'b0ss-pass'];

/** Runs `tasks` with at most `width` at once; answers their results in order. */
async function concurrently<T>(width: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return results;
}

/** Which worker answered (the request id's prefix differs per worker). */
const workerOf = (res: HttpResponse): string => String(res.headers['x-couch-request-id']).slice(0, 6);

describe('two worker processes on SQLite: writes and view builds share the file', () => {
  let dir: string;
  let divan: RunningDivan;
  let url: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'divan-workers-writes-'));
    // Info: the map functions' log() lines are counted.
    const ini = ['[admins]', `${ADMIN[0]} = ${ADMIN[1]}`, '[chttpd_auth]', 'iterations = 1000', '[log]', 'level = info', ''];
    writeFileSync(join(dir, 'local.ini'), ini.join('\n'));
    divan = await startDivan(['--port', '0', '--workers', '2', '--data', dir, '--config', join(dir, 'local.ini')]);
    url = divan.url;
  });

  after(async () => {
    assert.equal(await divan.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  });

  test('concurrent PUTs and _bulk_docs over many connections all succeed, and every document is stored once', async () => {
    assert.equal((await request(url, '/many', { method: 'PUT', auth: ADMIN })).status, 201);
    const puts = Array.from({ length: 600 }, (_, i) => () => request(url, `/many/put-${i}`, { method: 'PUT', auth: ADMIN, body: { i } }));
    const bulks = Array.from({ length: 40 }, (_, b) => () =>
      request(url, '/many/_bulk_docs', { method: 'POST', auth: ADMIN, body: { docs: Array.from({ length: 50 }, (_, i) => ({ _id: `bulk-${b}-${i}`, b, i })) } }),
    );
    // Interleaved, 48 requests at a time, each on its own connection: both workers write at once.
    const tasks = puts.flatMap((put, i) => (i % 15 === 0 ? [put, bulks[i / 15]!] : [put]));
    const answers = await concurrently(48, tasks);
    const failed = answers.filter((res) => res.status !== 201);
    assert.deepEqual(failed.map((res) => `${res.status} ${res.text}`), []);
    assert.equal(new Set(answers.map(workerOf)).size, 2, 'both workers wrote');
    const bulkErrors = answers.filter((res) => Array.isArray(res.body)).flatMap((res) => res.body.filter((row: { ok?: boolean }) => row.ok !== true));
    assert.deepEqual(bulkErrors, []);
    const info = (await request(url, '/many', { auth: ADMIN })).body;
    assert.equal(info.doc_count, 600 + 40 * 50);
    assert.equal(Number(String(info.update_seq).split('-')[0]), 600 + 40 * 50, 'one sequence per write, none lost or doubled');
    const all = (await request(url, '/many/_all_docs', { auth: ADMIN })).body;
    assert.equal(all.rows.length, 600 + 40 * 50);
  });

  test('a view queried through both workers at once maps each document exactly once', async () => {
    assert.equal((await request(url, '/viewed', { method: 'PUT', auth: ADMIN })).status, 201);
    const map = 'function (doc) { log("mapped:" + doc._id); emit(doc.n, 1); }';
    const ddoc = await request(url, '/viewed/_design/count', { method: 'PUT', auth: ADMIN, body: { views: { by_n: { map, reduce: '_count' } } } });
    assert.equal(ddoc.status, 201, ddoc.text);
    const load = async (from: number, count: number): Promise<void> => {
      for (let start = from; start < from + count; start += 500) {
        const docs = Array.from({ length: 500 }, (_, i) => ({ _id: `d${String(start + i).padStart(5, '0')}`, n: start + i }));
        assert.equal((await request(url, '/viewed/_bulk_docs', { method: 'POST', auth: ADMIN, body: { docs } })).status, 201);
      }
    };
    const queryAll = async (expected: number): Promise<void> => {
      const answers = await Promise.all(Array.from({ length: 8 }, () => request(url, '/viewed/_design/count/_view/by_n?reduce=false&limit=1', { auth: ADMIN })));
      assert.deepEqual([...new Set(answers.map((res) => res.status))], [200]);
      assert.equal(new Set(answers.map(workerOf)).size, 2, 'both workers answered');
      assert.deepEqual([...new Set(answers.map((res) => res.body.total_rows))], [expected]);
    };
    const mappedLines = (): number => (divan.stderr().match(/log: mapped:d\d{5}/g) ?? []).length;
    /** The lines come through the workers' stderr pipe: wait for them, and a little longer for any extra. */
    const settledLines = async (expected: number): Promise<number> => {
      await untilTrue(async () => mappedLines() >= expected, 5000).catch(() => undefined);
      await new Promise((wait) => setTimeout(wait, 300));
      return mappedLines();
    };
    await load(0, 3000);
    await queryAll(3000);
    assert.equal(await settledLines(3000), 3000, 'each document mapped once, by one worker');
    await load(3000, 1500);
    await queryAll(4500);
    assert.equal(await settledLines(4500), 4500, 'the worker that waited found the index up to date');
  });

  test('a worker killed while both write: its lease is released and writes go on', async () => {
    assert.equal((await request(url, '/survive', { method: 'PUT', auth: ADMIN })).status, 201);
    const [victim] = childPids(divan.child.pid!);
    const written: string[] = [];
    let failed = 0;
    let stop = false;
    let n = 0;
    const writer = async (): Promise<void> => {
      while (!stop) {
        const id = `s${n++}`;
        await withTimeout(request(url, `/survive/${id}`, { method: 'PUT', auth: ADMIN, body: { id } }), 5000).then(
          (res) => (res.status === 201 ? written.push(id) : failed++),
          () => failed++,
        );
      }
    };
    const writers = Array.from({ length: 8 }, writer);
    try {
      await untilTrue(async () => written.length >= 100);
      process.kill(victim!, 'SIGKILL');
      const atKill = written.length;
      await untilTrue(async () => {
        const now = childPids(divan.child.pid!);
        return now.length === 2 && !now.includes(victim!);
      });
      // Writes go on through the survivor and the replacement (a lease left to the dead worker would stop them).
      await untilTrue(async () => written.length >= atKill + 200, 15000);
    } finally {
      stop = true;
      await Promise.all(writers);
    }
    assert.ok(failed <= writers.length, `${failed} failed writes (at most those in flight at the kill), ${written.length} written`);
    const all = (await request(url, '/survive/_all_docs', { auth: ADMIN })).body;
    const stored = new Set(all.rows.map((row: { id: string }) => row.id));
    assert.deepEqual(written.filter((id) => !stored.has(id)), [], 'every acknowledged write is stored');
  });
});
