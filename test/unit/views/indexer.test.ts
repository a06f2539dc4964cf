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

  it('reports a long build to _active_tasks while it runs, then removes it', async () => {
    const tasks = new ActiveTasks(() => 'node1');
    const seen: JsonObject[][] = [];
    const mappedIds: string[] = [];
    const functions: ViewFunctions = {
      map: (ddoc, path, docs) => {
        seen.push(tasks.list());
        mappedIds.push(...docs.map((doc) => String(doc['_id'])));
        return sandbox.map('db', ddoc as DesignDoc, path, docs);
      },
      call: (ddoc, path, argLists) => sandbox.call('db', ddoc as DesignDoc, path, argLists),
    };
    const group = viewGroupOf({ _id: '_design/app', _rev: '1-a', views: { v: { map: 'function (doc) { emit(doc.n, null); }' } } });
    const seq = await updateIndex({ storage, functions, tasks, log: new Logger('none') }, 'db', group);
    assert.equal(seq, DOCS + 1);
    assert.equal(seen.length, 3);
    const [first, , last] = seen.map((list) => list[0]!);
    assert.equal(first!['type'], 'indexer');
    assert.equal(first!['database'], 'db');
    assert.equal(first!['design_document'], '_design/app');
    assert.equal(first!['total_changes'], DOCS + 1);
    assert.equal(first!['changes_done'], 0);
    assert.equal(last!['changes_done'], INDEX_BATCH * 2);
    assert.ok((last!['progress'] as number) > 90);
    assert.deepEqual(tasks.list(), []);
    assert.equal(mappedIds.length, DOCS);
    assert.ok(!mappedIds.includes('_design/x'));
  });
});
