import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import type { HttpResponse } from '../support/http.js';

/**
 * Issue 32 item 7: one database's slow design-document functions do not stall another database's.
 * One worker; the slow database's validation takes 250 ms a document, so a request of 8 documents
 * would hold the worker 2 s without a budget. The proof is the order of the answers, not a latency.
 */
describe('the sandbox serves databases fairly, each request within one time budget', () => {
  let server: TestServer;
  const slowVdu = { validate_doc_update: 'function (doc) { var end = Date.now() + 250; while (Date.now() < end) {} }' };
  const fastVdu = { validate_doc_update: 'function (doc) { if (!doc.ok) throw({forbidden: "ok required"}); }' };
  const bulk = (n: number): { docs: { _id: string }[] } => ({ docs: Array.from({ length: 8 }, (_, i) => ({ _id: `r${n}-d${i}` })) });

  before(async () => {
    server = await startServer({ ini: '[divan]\njs_workers = 1\n[couchdb]\nos_process_timeout = 1000\n' });
    for (const [db, vdu] of [['slow', slowVdu], ['fast', fastVdu]] as const) {
      assert.equal((await server.admin(`/${db}`, { method: 'PUT' })).status, 201);
      assert.equal((await server.admin(`/${db}/_design/app`, { method: 'PUT', body: vdu })).status, 201);
    }
    // Both design documents loaded before the race.
    assert.equal((await server.admin('/fast/warm', { method: 'PUT', body: { ok: true } })).status, 201);
  });
  after(async () => server.close());

  test('issue 32 item 7: a _bulk_docs whose validation runs past os_process_timeout answers os_process_error for the documents past the budget', async () => {
    const res = await server.admin('/slow/_bulk_docs', { method: 'POST', body: bulk(0) });
    const rows = res.body as { ok?: boolean; error?: string; reason?: string }[];
    const passed = rows.filter((row) => row.ok).length;
    assert.ok(passed >= 1 && passed <= 5, JSON.stringify(rows));
    const refused = rows.filter((row) => !row.ok);
    assert.equal(refused.length, 8 - passed);
    for (const row of refused) assert.equal(row.error, 'os_process_error');
  });

  test('issue 32 item 7: another database\'s write waits for the slow database\'s running request only, not for its queue', async () => {
    const finished: string[] = [];
    const track = (name: string, pending: Promise<HttpResponse>): Promise<HttpResponse> => pending.then((res) => (finished.push(name), res));
    const slow = [0, 1, 2].map((n) => track(`slow${n}`, server.admin('/slow/_bulk_docs', { method: 'POST', body: bulk(n + 1) })));
    // Well inside the first slow request's budget: the other two are waiting by then.
    await sleep(300);
    const fast = await track('fast', server.admin('/fast/doc', { method: 'PUT', body: { ok: true } }));
    assert.equal(fast.status, 201);
    await Promise.all(slow);
    assert.ok(finished.indexOf('fast') <= 1, finished.join(' '));
  });

  test('issue 32 item 7: a slow view build yields to another database\'s write between its slices', async () => {
    const slowView = { views: { slow: { map: 'function (doc) { var end = Date.now() + 250; while (Date.now() < end) {} emit(doc._id, null); }' } } };
    assert.equal((await server.admin('/viewed', { method: 'PUT' })).status, 201);
    assert.equal((await server.admin('/viewed/_design/app', { method: 'PUT', body: slowView })).status, 201);
    const docs = Array.from({ length: 16 }, (_, i) => ({ _id: `v${i}` }));
    assert.equal((await server.admin('/viewed/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    const started = performance.now();
    const query = server.admin('/viewed/_design/app/_view/slow').then((res) => ({ res, ms: performance.now() - started }));
    await sleep(300);
    const writeStarted = performance.now();
    assert.equal((await server.admin('/fast/during-view', { method: 'PUT', body: { ok: true } })).status, 201);
    const writeMs = performance.now() - writeStarted;
    const { res, ms } = await query;
    assert.equal(res.body.rows.length, 16);
    // The build takes 4 s of map time; the write waits for one slice (the 1 s budget) at most.
    assert.ok(writeMs < ms / 2, `write ${Math.round(writeMs)} ms, view ${Math.round(ms)} ms`);
  });
});
