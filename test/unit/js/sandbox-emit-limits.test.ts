import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { DesignDoc } from '../../../src/js/sandbox.js';
import { testSandbox } from '../../support/js-sandbox.js';

/** Issue 32 item 14, inside the sandbox: emit stops at the bound, before the rows fill the memory. */
describe('emit bounds inside the sandbox', () => {
  const sandbox = testSandbox({ maxEmits: 100, maxEmitBytes: 10_000, timeoutMs: 30_000, memoryBytes: 16 * 1024 * 1024 });
  after(() => sandbox.close());
  const ddoc: DesignDoc = {
    _id: '_design/flood',
    _rev: '1-a',
    views: {
      caught: { map: 'function (doc) { for (var i = 0; i < doc.n; i++) { try { emit(i, "row"); } catch (e) {} } }' },
      fits: { map: 'function (doc) { for (var i = 0; i < 100; i++) emit(i, null); }' },
    },
  };

  test('issue 32 item 14: a map emitting 400000 rows past the bound, catching every error, fails with emit_limit, not by the memory limit', async () => {
    const [outcome] = await sandbox.map('db', ddoc, ['views', 'caught', 'map'], [{ n: 400_000 }]);
    assert.equal(outcome!.ok, false);
    assert.deepEqual(!outcome!.ok && outcome!.error, {
      error: 'emit_limit',
      message: 'The map function emitted more than 100 rows or 10000 characters of JSON for one document ([query_server_config] max_emits_per_doc, max_emit_bytes_per_doc).',
    });
  });

  test('issue 32 item 14: exactly max_emits_per_doc rows are kept', async () => {
    const [outcome] = await sandbox.map('db', ddoc, ['views', 'fits', 'map'], [{}]);
    assert.equal(outcome!.ok && (outcome!.value as unknown[]).length, 100);
  });
});
