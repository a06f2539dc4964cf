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

  it('commits a durable write with synchronous = FULL (fsync before the answer)', async () => {
    assert.equal(await queue.enqueue(level), FULL);
  });

  it('commits a batch of non-durable writes only with synchronous = NORMAL (no fsync)', async () => {
    const levels = await Promise.all([queue.enqueue(level, false), queue.enqueue(level, false)]);
    assert.deepEqual(levels, [NORMAL, NORMAL]);
    assert.equal(queue.transactions, 1);
  });

  it('makes a whole batch durable when one of its writes is', async () => {
    const levels = await Promise.all([queue.enqueue(level, false), queue.enqueue(level), queue.enqueue(level, false)]);
    assert.deepEqual(levels, [FULL, FULL, FULL]);
  });

  it('goes back to FULL for the next durable batch after a non-durable one', async () => {
    assert.equal(await queue.enqueue(level, false), NORMAL);
    assert.equal(await queue.enqueue(level), FULL);
    assert.equal(level(), FULL);
  });
});
