import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../../src/storage/sqlite/sqlite-schema.js';
import { openSqliteStorage } from '../../../../src/storage/sqlite/sqlite-storage.js';

const REV = `1-${'a'.repeat(32)}`;
const TREE = JSON.stringify({ [REV]: { parent: null, deleted: false } });

describe('sqlite schema migrations', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'divan-schema-'));
    file = path.join(dir, 'divan.sqlite');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('upgrades a version 1 file in place: its leaf bodies stay readable leaves, nothing to compact', async () => {
    const old = new Database(file);
    old.exec(MIGRATIONS[0]);
    old.pragma('user_version = 1');
    old.prepare("INSERT INTO databases (name, security, data_size, instance_start_time) VALUES ('db', '{}', 7, '1')").run();
    old.prepare("INSERT INTO documents (db_id, id, tree, winner, deleted, seq) VALUES (1, 'doc', ?, ?, 0, 1)").run(TREE, REV);
    old.prepare("INSERT INTO leaf_bodies (doc_pk, rev, body) VALUES (1, ?, '{\"v\":1}')").run(REV);
    old.close();

    const storage = openSqliteStorage(file);
    try {
      assert.deepEqual((await storage.readDocument('db', 'doc'))?.body, { v: 1 });
      assert.equal((await storage.databaseInfo('db'))?.compactableSize, 0);
      assert.equal(await storage.compact('db'), 0);
      assert.deepEqual((await storage.readDocument('db', 'doc', { rev: REV }))?.body, { v: 1 }, 'the leaf survives compaction');
    } finally {
      await storage.close();
    }
    const reopened = new Database(file, { readonly: true });
    assert.equal(reopened.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    reopened.close();
  });

  it('upgrades a file whose search catalog was created on first use: its indexes stay, the step is recorded', async () => {
    const old = new Database(file);
    old.exec(MIGRATIONS.slice(0, 7).join('\n'));
    old.pragma('user_version = 7');
    old.prepare("INSERT INTO databases (name, security, data_size, instance_start_time) VALUES ('db', '{}', 0, '1')").run();
    // As the search store created them before the catalog was a schema step.
    old.exec(`CREATE TABLE IF NOT EXISTS search_indexes (index_id INTEGER PRIMARY KEY AUTOINCREMENT, db_id INTEGER NOT NULL,
      signature TEXT NOT NULL, update_seq INTEGER NOT NULL DEFAULT 0, UNIQUE (db_id, signature));
      INSERT INTO search_indexes (db_id, signature, update_seq) VALUES (1, 'sig', 5);
      CREATE TABLE search_docs_1 (doc_id TEXT PRIMARY KEY) WITHOUT ROWID;
      INSERT INTO search_docs_1 (doc_id) VALUES ('doc');`);
    old.close();

    const storage = openSqliteStorage(file);
    try {
      assert.deepEqual(await storage.search.list('db'), [{ signature: 'sig', updateSeq: 5, docs: 1 }]);
    } finally {
      await storage.close();
    }
    const reopened = new Database(file, { readonly: true });
    assert.equal(reopened.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    reopened.close();
  });

  it('creates the search catalog with the schema, before any index', async () => {
    await openSqliteStorage(file).close();
    const fresh = new Database(file, { readonly: true });
    assert.ok(fresh.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'search_indexes'").get());
    fresh.close();
  });

  it('refuses a file migrated by a newer Divan', () => {
    const newer = new Database(file);
    newer.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    newer.close();
    assert.throws(() => openSqliteStorage(file), /newer than this Divan supports/);
  });
});
