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

  it('fills the per-principal rows of documents written before they existed, the rows the writes keep', async () => {
    const storage = openSqliteStorage(file);
    await writeAccessDocuments(storage);
    const listed = await accessListings(storage);
    await storage.close();
    const raw = new Database(file);
    const rows = () => raw.prepare('SELECT db_id, principal, id, seq, deleted FROM access_rows ORDER BY db_id, principal, id').all();
    const kept = rows();
    assert.equal(kept.length, 8, JSON.stringify(kept));
    // A file of the version before the rows: no rows at all.
    raw.exec('DELETE FROM access_rows');
    raw.pragma('user_version = 7');
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

  it('refuses a file migrated by a newer Divan', () => {
    const newer = new Database(file);
    newer.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    newer.close();
    assert.throws(() => openSqliteStorage(file), /newer than this Divan supports/);
  });
});
