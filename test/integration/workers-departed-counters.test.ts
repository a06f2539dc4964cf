// The node's counters are monotonic, as CouchDB's: a worker that is killed and replaced leaves
// its requests counted in `_stats` and the Prometheus scrape.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { request } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';
import { childPids, pinnedToEachWorker, untilTrue } from '../support/workers.js';

const ADMIN: [string, string] = ['boss', 'b0ss-pass'];

describe('two worker processes: a replaced worker stays counted', () => {
  let dir: string;
  let divan: RunningDivan;
  const deletes = async (): Promise<number> => (await request(divan.url, '/_node/_local/_stats/couchdb/httpd_request_methods/DELETE', { auth: ADMIN })).body.value ?? 0;
  const scrapedDeletes = async (): Promise<number> => {
    const scrape = await request(divan.url, '/_node/_local/_prometheus', { auth: ADMIN });
    const family = parsePrometheusTextFormat(scrape.text).find((each) => each.name === 'couchdb_httpd_request_methods');
    return Number(family?.metrics.find((metric) => metric.labels?.['method'] === 'DELETE')?.value ?? 0);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'divan-departed-'));
    writeFileSync(join(dir, 'local.ini'), ['[divan]', 'keepalive_timeout = 600000', '[admins]', `${ADMIN[0]} = ${ADMIN[1]}`, '[chttpd_auth]', 'iterations = 1000', '[log]', 'level = error', ''].join('\n'));
    divan = await startDivan(['--port', '0', '--workers', '2', '--data', dir, '--config', join(dir, 'local.ini')]);
  });

  after(async () => {
    assert.equal(await divan.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  });

  test("_stats and _prometheus keep a killed worker's requests after it is replaced", async () => {
    const pinned = await pinnedToEachWorker(divan.url, 2);
    // Each worker serves some: whichever is killed, its share would be lost without kept counters.
    for (const [worker, count] of [[pinned[0]!, 5], [pinned[1]!, 7]] as const) {
      for (let i = 0; i < count; i++) assert.equal((await worker.request('/no-such-db', { method: 'DELETE', auth: ADMIN })).status, 404);
      worker.close();
    }
    const counted = await deletes();
    assert.ok(counted >= 12, `the node counted ${counted} DELETEs`);
    const [victim] = childPids(divan.child.pid!);
    process.kill(victim!, 'SIGKILL');
    await untilTrue(async () => {
      const now = childPids(divan.child.pid!);
      return now.length === 2 && !now.includes(victim!);
    });
    assert.equal(await deletes(), counted, '_stats after the replacement');
    assert.equal(await scrapedDeletes(), counted, 'the Prometheus scrape after the replacement');
  });
});
