import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStorage, type SqliteStorage } from '../../../../src/storage/sqlite/sqlite-storage.js';

function assertOneLineOpenError(file: string, error: unknown): true {
  assert.ok(error instanceof Error);
  assert.ok(error.message.startsWith(`cannot open database file ${file}: `), error.message);
  assert.ok(error.message.length > `cannot open database file ${file}: `.length, 'a reason is given');
  assert.ok(!error.message.includes('\n'), 'one line');
  return true;
}

describe('openSqliteStorage: errors', () => {
  it('fails with a one-line message when the path is under a regular file', () => {
    const file = '/etc/passwd/x/divan.sqlite';
    assert.throws(() => openSqliteStorage(file), (error) => assertOneLineOpenError(file, error));
  });

  it('fails with a one-line message in a read-only directory', (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'divan-'));
    try {
      fs.chmodSync(dir, 0o555);
      try {
        fs.accessSync(dir, fs.constants.W_OK);
        t.skip('every directory is writable for this user (root)');
        return;
      } catch {
        // Not writable: the case under test.
      }
      const file = path.join(dir, 'divan.sqlite');
      assert.throws(() => openSqliteStorage(file), (error) => assertOneLineOpenError(file, error));
    } finally {
      fs.chmodSync(dir, 0o755);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('openSqliteStorage: on disk', () => {
  let dir: string;
  let file: string;
  let storage: SqliteStorage;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'divan-'));
    file = path.join(dir, 'divan.sqlite');
    storage = openSqliteStorage(file);
    await storage.createDatabase('db', {});
  });
  afterEach(async () => {
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A second, independent connection: sees only what was committed. */
  function inspect<T>(query: (db: Database.Database) => T): T {
    const db = new Database(file, { readonly: true });
    try {
      return query(db);
    } finally {
      db.close();
    }
  }

  it('uses WAL journaling', () => {
    assert.equal(inspect((db) => db.pragma('journal_mode', { simple: true })), 'wal');
    assert.equal(storage.kind, 'sqlite');
  });

  it('commits writes started in the same turn in one transaction', async () => {
    const before = storage.committedTransactions;
    const writes = Array.from({ length: 100 }, (_, i) =>
      storage.writeDocuments('db', [{ id: `d${i}`, body: {}, deleted: false }], { newEdits: true }),
    );
    const locals = [storage.putLocal('db', '_local/a', {}, undefined), storage.putSecurity('db', { admins: {} })];
    await Promise.all([...writes, ...locals]);
    assert.equal(storage.committedTransactions, before + 1);
    await storage.writeDocuments('db', [{ id: 'later', body: {}, deleted: false }], { newEdits: true });
    assert.equal(storage.committedTransactions, before + 2);
    assert.deepEqual(inspect((db) => db.prepare('SELECT count(*) AS n FROM documents').get()), { n: 101 });
  });

  it('answers concurrent creations of one id in one group commit with exactly one success and conflicts for the rest', async () => {
    const before = storage.committedTransactions;
    const writes = Array.from({ length: 8 }, (_, i) => storage.writeDocuments('db', [{ id: 'same', body: { i }, deleted: false }], { newEdits: true }));
    const results = (await Promise.all(writes)).map(([result]) => result!);
    assert.equal(storage.committedTransactions, before + 1);
    const winners = results.filter((result) => result.ok);
    assert.equal(winners.length, 1);
    assert.deepEqual(results.filter((result) => !result.ok).map((result) => !result.ok && result.error), Array(7).fill('conflict'));
    const stored = inspect((db) => db.prepare("SELECT winner FROM documents WHERE id = 'same'").pluck().all());
    assert.deepEqual(stored, [winners[0]!.ok && winners[0]!.rev]);
  });

  it('keeps the other writes of a group commit when one of them fails', async () => {
    const writes = [
      storage.writeDocuments('db', [{ id: 'kept1', body: {}, deleted: false }], { newEdits: true }),
      storage.writeDocuments('no_such_db', [{ id: 'lost', body: {}, deleted: false }], { newEdits: true }),
      storage.writeDocuments('db', [{ id: 'kept2', body: {}, deleted: false }], { newEdits: true }),
    ];
    const outcomes = await Promise.allSettled(writes);
    assert.deepEqual(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled']);
    const ids = inspect((db) => db.prepare("SELECT id FROM documents WHERE id IN ('kept1', 'kept2', 'lost') ORDER BY id").pluck().all());
    assert.deepEqual(ids, ['kept1', 'kept2']);
  });

  it('keeps superseded bodies until compaction, then leaf bodies only', async () => {
    let [result] = await storage.writeDocuments('db', [{ id: 'doc', body: { v: 0 }, deleted: false }], { newEdits: true });
    for (let v = 1; v <= 3; v++) {
      assert.ok(result.ok);
      [result] = await storage.writeDocuments('db', [{ id: 'doc', body: { v }, deleted: false, baseRev: result.rev }], {
        newEdits: true,
      });
    }
    assert.ok(result.ok);
    await storage.writeDocuments('db', [{ id: 'doc', body: { branch: true }, deleted: false, revPath: [`1-${'f'.repeat(32)}`] }], {
      newEdits: false,
    });
    const superseded = inspect((db) => db.prepare('SELECT body FROM revision_bodies WHERE leaf = 0 ORDER BY body').pluck().all());
    assert.deepEqual(superseded, ['{"v":0}', '{"v":1}', '{"v":2}']);
    assert.equal(await storage.compact('db'), 3 * '{"v":0}'.length);
    const bodies = inspect((db) => db.prepare('SELECT rev, body FROM revision_bodies ORDER BY rev').all());
    assert.deepEqual(bodies, [
      { rev: `1-${'f'.repeat(32)}`, body: '{"branch":true}' },
      { rev: result.rev, body: '{"v":3}' },
    ]);
  });

  it('refuses calls after close', async () => {
    await storage.close();
    await assert.rejects(storage.listDatabases(), /storage is closed/);
    await assert.rejects(storage.writeDocuments('db', [], { newEdits: true }), /storage is closed/);
    await storage.close();
  });
});
