import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { DesignDoc, Outcome } from '../../../src/js/sandbox.js';
import { testSandbox } from '../../support/js-sandbox.js';

/** Map and index documents run many to one call into the context: each keeps its own answer, globals, logs and limits. */
describe('map and index batches run in one call and keep each document apart', () => {
  const sandbox = testSandbox({ timeoutMs: 400, maxEmits: 3 });
  after(() => sandbox.close());
  const shown = (outcome: Outcome): unknown => (outcome.ok ? outcome.value : outcome.kind === 'thrown' ? outcome.error : outcome.kind);

  test('a global one document leaves, however it was made, is gone for the next document of the same batch', async () => {
    const ddoc: DesignDoc = {
      _id: '_design/leaks', _rev: '1-a',
      views: {
        v: {
          map: `function (doc) {
            emit('seen', [typeof leakA, typeof leakB, typeof leakC, typeof leakD, typeof leakE, Object.getOwnPropertySymbols(globalThis).length]);
            if (doc.how === 'implicit') leakA = 1;
            if (doc.how === 'define') Object.defineProperty(globalThis, 'leakB', { value: 1, configurable: true });
            if (doc.how === 'proxy') Reflect.defineProperty(new Proxy(globalThis, {}), 'leakC', { value: 1, configurable: true });
            if (doc.how === 'eval') (0, eval)('var leakD = 1');
            if (doc.how === 'symbol') globalThis[Symbol('leak')] = 1;
            if (doc.how === 'accessor') Object.defineProperties(globalThis, { leakE: { get: function () { return 1; }, configurable: true } });
          }`,
        },
      },
    };
    const hows = ['implicit', 'define', 'proxy', 'eval', 'symbol', 'accessor'];
    const docs = hows.flatMap((how) => [{ how }, { how: 'none' }]);
    const outcomes = await sandbox.map('db', ddoc, ['views', 'v', 'map'], docs);
    const clean = ((outcomes[0] as { value: unknown[][] }).value[0]![1]) as unknown[];
    assert.deepEqual(clean.slice(0, 5), ['undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
    for (const outcome of outcomes) assert.deepEqual(shown(outcome), [['seen', clean]]);
  });

  test('errors, logs and emit limits stay with their own document of the batch', async () => {
    const ddoc: DesignDoc = {
      _id: '_design/each', _rev: '1-a',
      views: { v: { map: 'function (doc) { log("doc " + doc.n); if (doc.n === 1) throw { error: "bad", reason: "one" }; for (var i = 0; i < doc.rows; i++) emit(doc.n, i); }' } },
    };
    const outcomes = await sandbox.map('db', ddoc, ['views', 'v', 'map'], [{ n: 0, rows: 1 }, { n: 1, rows: 0 }, { n: 2, rows: 9 }, { n: 3, rows: 2 }]);
    const limited = shown(outcomes[2]!) as { error: string; message: string };
    assert.equal(limited.error, 'emit_limit');
    assert.deepEqual(outcomes.map(shown), [[[0, 0]], { error: 'bad', reason: 'one' }, limited, [[3, 0], [3, 1]]]);
    assert.deepEqual(outcomes.map((outcome) => outcome.logs), [['doc 0'], ['doc 1'], ['doc 2'], ['doc 3']]);
  });

  test('an endless loop in the middle of a batch: the documents before it keep their rows, it times out, the ones after it still run', async () => {
    const ddoc: DesignDoc = { _id: '_design/loop', _rev: '1-a', nouveau: { t: { index: 'function (doc) { if (doc.loop) while (true) {} index("double", "n", doc.n); }' } } };
    const outcomes = await sandbox.index('db', ddoc, ['nouveau', 't', 'index'], [{ n: 0 }, { n: 1 }, { loop: true }, { n: 3 }].map((doc) => JSON.stringify(doc)));
    assert.deepEqual(outcomes.map((outcome) => (outcome.ok ? (outcome.value as unknown[]).length : outcome.kind)), [1, 1, 'timeout', 1]);
  });
});
