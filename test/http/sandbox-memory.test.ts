import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

const MIB = 1024 * 1024;

interface Held {
  bytes: number;
  contexts: number;
  evictions: number;
}

/**
 * Issue 32 item 8: the sandbox gives memory back. Contexts past `[quickjs] max_total_memory_bytes`
 * or idle past `[quickjs] idle_context_ms` are dropped, and `_stats`/`_prometheus` show what it holds.
 */
describe('the sandbox\'s memory is bounded, given back when idle, and shown in the metrics', () => {
  let server: TestServer;
  const held = async (): Promise<Held> => {
    const res = await server.admin('/_node/_local/_stats/divan/js');
    assert.equal(res.status, 200);
    const js = res.body as Record<'memory_bytes' | 'contexts' | 'evictions', { value: number } | undefined> | null;
    return { bytes: js?.memory_bytes?.value ?? -1, contexts: js?.contexts?.value ?? -1, evictions: js?.evictions?.value ?? -1 };
  };
  /** The figures once `done` holds of them; the worker reports after answering, so they may lag a little. */
  const heldWhen = async (done: (figures: Held) => boolean, waitMs: number): Promise<Held> => {
    const until = Date.now() + waitMs;
    let figures = await held();
    while (!done(figures) && Date.now() < until) {
      await sleep(100);
      figures = await held();
    }
    return figures;
  };

  before(async () => {
    server = await startServer({ ini: `[divan]\njs_workers = 1\n[quickjs]\nmax_total_memory_bytes = ${64 * MIB}\nidle_context_ms = 3000\n` });
  });
  after(async () => server.close());

  test('issue 32 item 8: eight design documents stay within max_total_memory_bytes, the oldest contexts evicted, and _stats shows it', async () => {
    for (let n = 0; n < 8; n++) {
      assert.equal((await server.admin(`/mem${n}`, { method: 'PUT' })).status, 201);
      const vdu = { validate_doc_update: `function (doc) { var keep = []; for (var i = 0; i < 1000; i++) keep.push({ n: ${n}, i: i }); }` };
      assert.equal((await server.admin(`/mem${n}/_design/app`, { method: 'PUT', body: vdu })).status, 201);
      assert.equal((await server.admin(`/mem${n}/doc`, { method: 'PUT', body: {} })).status, 201);
    }
    const figures = await heldWhen((each) => each.evictions >= 4, 10_000);
    assert.ok(figures.contexts >= 1 && figures.contexts <= 4, JSON.stringify(figures));
    assert.ok(figures.bytes > 0 && figures.bytes <= 64 * MIB, JSON.stringify(figures));
    assert.ok(figures.evictions >= 4, JSON.stringify(figures));
  });

  test('issue 32 item 8: contexts idle past idle_context_ms are dropped and their memory no longer counted', async () => {
    const figures = await heldWhen((each) => each.contexts === 0, 30_000);
    assert.deepEqual({ bytes: figures.bytes, contexts: figures.contexts }, { bytes: 0, contexts: 0 });
  });

  test('issue 32 item 8: _prometheus has the sandbox\'s memory, contexts and evictions', async () => {
    const text = (await server.admin('/_node/_local/_prometheus')).text;
    for (const name of ['divan_js_sandbox_memory_bytes', 'divan_js_sandbox_contexts', 'divan_js_sandbox_evictions_total']) {
      assert.match(text, new RegExp(`^${name} \\d+$`, 'm'), name);
    }
  });
});
