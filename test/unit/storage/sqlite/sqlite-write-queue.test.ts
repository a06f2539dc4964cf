import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalLocks } from '../../../../src/locks/named-locks.js';
import { openConnection, type Connection } from '../../../../src/storage/sqlite/sqlite-connection.js';
import { WriteQueue } from '../../../../src/storage/sqlite/sqlite-write-queue.js';

/** SQLite's numbers for the `synchronous` setting. */
const NORMAL = 1;
const FULL = 2;

describe('WriteQueue: which commits wait for the disk', () => {
  let dir: string;
  let db: Connection;
  let queue: WriteQueue;
  const level = (): number => db.pragma('synchronous', { simple: true }) as number;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'divan-queue-'));
    db = openConnection(path.join(dir, 'divan.sqlite'));
    queue = new WriteQueue(db, new LocalLocks());
  });
  afterEach(() => {
    queue.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers a durable write only after a WAL sync, its commit left to that sync (synchronous = NORMAL)', async () => {
    assert.equal(await queue.enqueue(level), NORMAL);
    assert.equal(queue.walSyncs, 1);
    assert.equal(level(), FULL);
  });

  it('commits a batch of non-durable writes only with synchronous = NORMAL (no fsync)', async () => {
    const levels = await Promise.all([queue.enqueue(level, false), queue.enqueue(level, false)]);
    assert.deepEqual(levels, [NORMAL, NORMAL]);
    assert.equal(queue.transactions, 1);
    assert.equal(queue.walSyncs, 0);
  });

  it('makes a whole batch durable when one of its writes is: one transaction, one WAL sync before any answer', async () => {
    const answered: number[] = [];
    const writes = [queue.enqueue(level, false), queue.enqueue(level), queue.enqueue(level, false)].map((write) => write.then(() => answered.push(queue.walSyncs)));
    await Promise.all(writes);
    assert.deepEqual(answered, [1, 1, 1]);
    assert.equal(queue.transactions, 1);
  });

  it('leaves the connection at FULL between batches, so writes outside the queue fsync at COMMIT', async () => {
    assert.equal(await queue.enqueue(level, false), NORMAL);
    assert.equal(level(), FULL);
    await queue.enqueue(level);
    assert.equal(level(), FULL);
  });

  it('fails only the job that throws in a batch; the others commit and are answered', async () => {
    db.exec('CREATE TABLE t (v INTEGER NOT NULL)');
    const insert = (v: number | null) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;
    const outcomes = await Promise.allSettled([queue.enqueue(insert(1)), queue.enqueue(insert(null)), queue.enqueue(insert(3))]);
    assert.deepEqual(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.equal(queue.transactions, 1);
    assert.deepEqual(db.prepare('SELECT v FROM t ORDER BY v').pluck().all(), [1, 3]);
  });
});
