import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

/**
 * Hostile design-document JavaScript fails only its own call while the server keeps answering: a
 * concurrent `GET /_up` keeps a p99 below 100 ms (a safety bound, generous for a shared machine).
 */
describe('the sandbox keeps the server safe from a design document\'s functions', () => {
  let server: TestServer;
  const attacks: Record<string, string> = {
    loop: 'while (true) {}',
    memory: 'var a = new ArrayBuffer(1024 * 1024 * 1024); a.byteLength;',
    growth: 'var a = []; for (;;) a.push(new Array(100000).fill(1));',
    fs: 'require("fs").writeFileSync("/tmp/divan-owned", "x");',
    exit: 'process.exit(1);',
    proto: '"use strict"; Object.prototype.toJSON = function () { return "owned"; };',
    array: 'Array.prototype.push = function () { throw new Error("owned"); };',
  };
  const vdu = `function (newDoc) {
    var attacks = ${JSON.stringify(attacks)};
    if (newDoc.attack) (0, eval)(attacks[newDoc.attack]);
    if (!newDoc.ok) throw({forbidden: 'ok required'});
  }`;

  before(async () => {
    server = await startServer({ ini: '[couchdb]\nos_process_timeout = 1000\n' });
    await server.admin('/safe', { method: 'PUT' });
    assert.equal((await server.admin('/safe/_design/hostile', { method: 'PUT', body: { validate_doc_update: vdu } })).status, 201);
  });
  after(async () => server.close());

  test('each attack fails its own write only, and /_up keeps answering fast meanwhile', async () => {
    const latencies: number[] = [];
    let running = true;
    const prober = (async () => {
      while (running) {
        const started = performance.now();
        const res = await server.request('/_up');
        latencies.push(performance.now() - started);
        assert.equal(res.status, 200);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      for (const attack of Object.keys(attacks)) {
        const res = await server.admin(`/safe/${attack}`, { method: 'PUT', body: { attack, ok: true } });
        assert.ok(res.status >= 400, `${attack}: ${res.status} ${JSON.stringify(res.body)}`);
        assert.equal((await server.admin(`/safe/${attack}`)).status, 404, `${attack} was not stored`);
        const after = await server.admin(`/safe/after-${attack}`, { method: 'PUT', body: { ok: true, list: [1, 2] } });
        assert.equal(after.status, 201, `a good write right after ${attack}: ${JSON.stringify(after.body)}`);
        const stored = await server.admin(`/safe/after-${attack}`);
        assert.deepEqual(stored.body.list, [1, 2]);
      }
      const refused = await server.admin('/safe/plain', { method: 'PUT', body: {} });
      assert.deepEqual([refused.status, refused.body], [403, { error: 'forbidden', reason: 'ok required' }], 'the function still works as written');
    } finally {
      running = false;
      await prober;
    }
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]!;
    assert.ok(latencies.length > 20, `only ${latencies.length} probes`);
    assert.ok(p99 < 100, `p99 of GET /_up was ${p99.toFixed(1)} ms over ${latencies.length} requests`);
  });

  test('the time and memory failures are os_process_error, the others the function\'s own errors', async () => {
    const loop = await server.admin('/safe/again', { method: 'PUT', body: { attack: 'loop', ok: true } });
    assert.deepEqual([loop.status, loop.body.error], [500, 'os_process_error']);
    assert.match(loop.body.reason, /longer than 1000 ms/);
    const memory = await server.admin('/safe/again', { method: 'PUT', body: { attack: 'memory', ok: true } });
    assert.deepEqual([memory.status, memory.body.error], [500, 'os_process_error']);
    const exit = await server.admin('/safe/again', { method: 'PUT', body: { attack: 'exit', ok: true } });
    assert.deepEqual([exit.status, exit.body], [500, { error: 'ReferenceError', reason: "'process' is not defined" }]);
  });
});
