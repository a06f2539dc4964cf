import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openConnection } from '../../../../src/storage/sqlite/sqlite-connection.js';
import { Freshness } from '../../../../src/storage/sqlite/sqlite-freshness.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SQLite freshness: when a reader looks for another connection\'s commits', () => {
  const dir = mkdtempSync(join(tmpdir(), 'divan-freshness-'));
  const file = join(dir, 'file.sqlite');
  const reader = openConnection(file);
  const writer = openConnection(file);
  writer.exec('CREATE TABLE IF NOT EXISTS t (v INTEGER)');
  after(() => {
    reader.close();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('after an outside event the next read sees the other connection\'s commit; without one, not in the same turn', async () => {
    let forgotten = 0;
    const freshness = new Freshness(reader, () => forgotten++);
    await nextTurn();
    freshness.beforeRead();
    writer.prepare('INSERT INTO t VALUES (1)').run();
    freshness.beforeRead();
    assert.equal(forgotten, 0, 'the second read of the same turn does not look again');
    freshness.outsideEvent();
    freshness.beforeRead();
    assert.equal(forgotten, 1, 'a request (or a sibling\'s message) makes the next read look');
  });

  test('the next turn of the event loop looks again', async () => {
    let forgotten = 0;
    const freshness = new Freshness(reader, () => forgotten++);
    freshness.beforeRead();
    writer.prepare('INSERT INTO t VALUES (2)').run();
    await nextTurn();
    freshness.beforeRead();
    assert.equal(forgotten, 1);
  });

  test('check() inside a write always looks', () => {
    let forgotten = 0;
    const freshness = new Freshness(reader, () => forgotten++);
    freshness.beforeRead();
    writer.prepare('INSERT INTO t VALUES (3)').run();
    freshness.check();
    assert.equal(forgotten, 1);
    freshness.check();
    assert.equal(forgotten, 1, 'nothing new: nothing forgotten');
  });

  test('a commit after a checkpoint restarted the log is seen, though the log is as long as before', () => {
    let forgotten = 0;
    const freshness = new Freshness(reader, () => forgotten++);
    writer.pragma('wal_checkpoint(TRUNCATE)');
    writer.prepare('INSERT INTO t VALUES (4)').run();
    freshness.outsideEvent();
    freshness.beforeRead();
    assert.equal(forgotten, 1);
    writer.pragma('wal_checkpoint(TRUNCATE)');
    writer.prepare('INSERT INTO t VALUES (5)').run();
    freshness.outsideEvent();
    freshness.beforeRead();
    assert.equal(forgotten, 2, 'the same frame count in a new log is a new commit');
    freshness.outsideEvent();
    freshness.beforeRead();
    assert.equal(forgotten, 2, 'nothing new: nothing forgotten');
  });

  test('after close, reads go on asking the pragma and still see commits', () => {
    let forgotten = 0;
    const freshness = new Freshness(reader, () => forgotten++);
    freshness.close();
    writer.prepare('INSERT INTO t VALUES (6)').run();
    freshness.outsideEvent();
    freshness.beforeRead();
    assert.equal(forgotten, 1);
  });
});
