import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../../src/storage/sqlite/sqlite-schema.js';
import { openSqliteStorage } from '../../../../src/storage/sqlite/sqlite-storage.js';
import { accessListings, writeAccessDocuments } from '../../../support/access-backfill.js';

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

  it('counts the live documents of a version 7 file in id blocks and groups of blocks: _all_docs offsets right from the first read and after writes', async () => {
    const old = new Database(file);
    for (const step of MIGRATIONS.slice(0, 7)) old.exec(step);
    old.pragma('user_version = 7');
    // 200 000 documents, two thirds live: 130 blocks of 1 024 in 3 groups of up to 64 blocks.
    const ids = Array.from({ length: 200_000 }, (_, i) => `d${String(i).padStart(6, '0')}`);
    const deleted = (i: number): boolean => i % 3 === 0;
    const live = ids.filter((_, i) => !deleted(i)).length;
    for (const name of ['other', 'db']) {
      old.prepare("INSERT INTO databases (name, security, doc_count, update_seq, instance_start_time) VALUES (?, '{}', ?, ?, '1')").run(name, live, ids.length);
    }
    const insert = old.prepare('INSERT INTO documents (db_id, id, tree, winner, deleted, seq) VALUES (?, ?, ?, ?, ?, ?)');
    old.transaction(() => {
      for (const dbId of [1, 2]) ids.forEach((id, i) => insert.run(dbId, id, TREE, REV, deleted(i) ? 1 : 0, i + 1));
    })();
    old.close();

    const storage = openSqliteStorage(file);
    const liveBefore = (n: number): number => ids.slice(0, n).filter((_, i) => !deleted(i)).length;
    try {
      for (const at of [0, 1, 1023, 1500, 3001, 98_303, 98_304, 150_000, 199_999]) {
        const page = await storage.listDocuments('db', { startKey: ids[at], limit: 1 });
        assert.equal(page.offset, liveBefore(at), `offset of ${ids[at]}`);
        assert.equal(page.totalRows, live);
        const descending = await storage.listDocuments('db', { startKey: ids[at], limit: 1, descending: true });
        assert.equal(descending.offset, live - liveBefore(at + 1), `descending offset of ${ids[at]}`);
      }
      // Later writes land in the backfilled blocks: 1 500 new ids in one block split it.
      await storage.writeDocuments('db', Array.from({ length: 1500 }, (_, i) => ({ id: `d120000x${i}`, body: {}, deleted: false })), { newEdits: true });
      assert.equal((await storage.listDocuments('db', { startKey: 'd180000', limit: 1 })).offset, liveBefore(180_000) + 1500);
      assert.equal((await storage.listDocuments('db', { startKey: 'd120001', limit: 1 })).offset, liveBefore(120_001) + 1500);
      assert.equal((await storage.listDocuments('other', { startKey: 'd180000', limit: 1 })).offset, liveBefore(180_000), 'another database keeps its own blocks');
    } finally {
      await storage.close();
    }
    const reopened = new Database(file, { readonly: true });
    const blocks = reopened.prepare('SELECT count(*) FROM id_blocks WHERE db_id = 2').pluck().get() as number;
    const groups = reopened.prepare('SELECT count(*) FROM id_groups WHERE db_id = 2').pluck().get() as number;
    reopened.close();
    assert.equal(blocks, Math.ceil(live / 1024) + 1, 'blocks of 1 024 live documents and a split');
    assert.equal(groups, 3);
  });

  it('fills the per-principal rows of documents written before they existed, the rows the writes keep', async () => {
    const storage = openSqliteStorage(file);
    await writeAccessDocuments(storage);
    const listed = await accessListings(storage);
    await storage.close();
    const raw = new Database(file);
    const rows = () => raw.prepare('SELECT db_id, principal, id, seq, deleted FROM access_rows ORDER BY db_id, principal, id').all();
    const kept = rows();
    assert.equal(kept.length, 8, JSON.stringify(kept));
    // A file of the version before the backfill step (9): no rows at all.
    raw.exec('DELETE FROM access_rows');
    raw.pragma('user_version = 8');
    raw.close();
    const upgraded = openSqliteStorage(file);
    try {
      assert.deepEqual(await accessListings(upgraded), listed);
    } finally {
      await upgraded.close();
    }
    const reopened = new Database(file, { readonly: true });
    try {
      assert.deepEqual(reopened.prepare('SELECT db_id, principal, id, seq, deleted FROM access_rows ORDER BY db_id, principal, id').all(), kept);
    } finally {
      reopened.close();
    }
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
