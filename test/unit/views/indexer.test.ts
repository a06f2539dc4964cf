/**
 * The indexer on a real SQLite file and the real sandbox: a long build shows as an `indexer` task
 * in `_active_tasks` while it runs; design documents are not mapped.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DesignDoc } from '../../../src/js/sandbox.js';
import { testSandbox } from '../../support/js-sandbox.js';
import type { JsonObject } from '../../../src/json/json.js';
import { Logger } from '../../../src/log/logger.js';
import { openSqliteStorage, type SqliteStorage } from '../../../src/storage/sqlite/sqlite-storage.js';
import { ActiveTasks } from '../../../src/tasks/active-tasks.js';
import { INDEX_BATCH, updateIndex } from '../../../src/views/indexer.js';
import type { ViewFunctions } from '../../../src/views/view-functions.js';
import { viewGroupOf } from '../../../src/views/view-group.js';
import { OPEN_SECURITY } from '../../support/backends.js';

const DOCS = INDEX_BATCH * 2 + 10;

describe('indexer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'divan-indexer-'));
  const sandbox = testSandbox();
  let storage: SqliteStorage;
  before(async () => {
    storage = openSqliteStorage(join(dir, 'divan.sqlite'));
    await storage.createDatabase('db', OPEN_SECURITY);
    await storage.writeDocuments('db', Array.from({ length: DOCS }, (_, i) => ({ id: `d${i}`, body: { n: i }, deleted: false })), { newEdits: true });
    await storage.writeDocuments('db', [{ id: '_design/x', body: { views: {} }, deleted: false }], { newEdits: true });
  });
  after(async () => {
    await Promise.all([storage.close(), sandbox.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports a long build to _active_tasks while it runs, then removes it; maps full batches in two halves at once, ahead of storing', async () => {
    const tasks = new ActiveTasks(() => 'node1');
    const seen: JsonObject[][] = [];
    const mappedIds: string[] = [];
    let [running, mostRunning] = [0, 0];
    const functions: ViewFunctions = {
      map: async (ddoc, path, docs) => {
        seen.push(tasks.list());
        mappedIds.push(...docs.map((doc) => String(doc['_id'])));
        mostRunning = Math.max(mostRunning, ++running);
        try {
          return await sandbox.map('db', ddoc as DesignDoc, path, docs);
        } finally {
          running--;
        }
      },
      call: (ddoc, path, argLists) => sandbox.call('db', ddoc as DesignDoc, path, argLists),
    };
    const group = viewGroupOf({ _id: '_design/app', _rev: '1-a', views: { v: { map: 'function (doc) { emit(doc.n, null); }' } } });
    const seq = await updateIndex({ storage, functions, tasks, log: new Logger('none') }, 'db', group);
    assert.equal(seq, DOCS + 1);
    // Two full batches in two halves each, then the last 10 documents (and the design document) in one call.
    assert.equal(seen.length, 5);
    assert.ok(mostRunning >= 2, 'the halves of a batch are mapped at the same time');
    const [first] = seen.map((list) => list[0]!);
    assert.equal(first!['type'], 'indexer');
    assert.equal(first!['database'], 'db');
    assert.equal(first!['design_document'], '_design/app');
    assert.equal(first!['total_changes'], DOCS + 1);
    assert.deepEqual(seen.map((list) => list[0]!['changes_done']), [0, 0, 0, 0, INDEX_BATCH], 'the third batch is read and mapped before the second is stored');
    assert.deepEqual(tasks.list(), []);
    assert.equal(mappedIds.length, DOCS);
    assert.equal(new Set(mappedIds).size, DOCS);
    assert.ok(!mappedIds.includes('_design/x'));
    const rows = await storage.views.rows('db', group.signature, { view: 0, skip: 0, inclusiveEnd: true, descending: false, limit: 1 });
    assert.equal(rows.totalRows, DOCS, 'every document stored its row');
  });
});
