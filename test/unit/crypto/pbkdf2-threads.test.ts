import assert from 'node:assert/strict';
import { pbkdf2Sync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { Pbkdf2Threads } from '../../../src/crypto/pbkdf2-threads.js';

/** Nice values of this process's threads (Linux /proc: field 19 of each task's stat line). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe('PBKDF2 threads', () => {
  const threads = new Pbkdf2Threads();
  after(() => threads.close());

  test('a derived key equals node:crypto pbkdf2Sync for the same UTF-8 inputs', async () => {
    const key = await threads.derive({ password: 'pässword', salt: 'sält', iterations: 1000, length: 32, digest: 'sha256', nice: 0 });
    assert.deepEqual(key, pbkdf2Sync(Buffer.from('pässword'), Buffer.from('sält'), 1000, 32, 'sha256'));
  });

  test('derivations run on a thread at the nice value asked for, and the event loop thread keeps its own', { skip: process.platform !== 'linux' }, async () => {
    const before = threadNiceValues();
    assert.ok(!before.includes(13), 'no thread of this process had nice 13 before');
    await threads.derive({ password: 'p', salt: 's', iterations: 10, length: 20, digest: 'sha1', nice: 13 });
    const now = threadNiceValues();
    assert.ok(now.includes(13), `a thread runs at nice 13: ${now.join(',')}`);
    assert.equal(threadNiceValues()[0], 0, 'the main thread is not reniced');
  });

  test('concurrent derivations each get a thread, and idle threads are reused', async () => {
    const jobs = Array.from({ length: 3 }, (_, i) => threads.derive({ password: `p${i}`, salt: 's', iterations: 2000, length: 32, digest: 'sha512', nice: 0 }));
    const keys = await Promise.all(jobs);
    keys.forEach((key, i) => assert.deepEqual(key, pbkdf2Sync(`p${i}`, 's', 2000, 32, 'sha512')));
    const size = threads.size;
    assert.ok(size >= 3);
    await threads.derive({ password: 'again', salt: 's', iterations: 10, length: 32, digest: 'sha256', nice: 0 });
    assert.equal(threads.size, size);
  });

  test('an unknown digest rejects that derivation only and the thread keeps serving', async () => {
    await assert.rejects(threads.derive({ password: 'p', salt: 's', iterations: 10, length: 32, digest: 'nope', nice: 0 }), /digest/i);
    const key = await threads.derive({ password: 'p', salt: 's', iterations: 10, length: 32, digest: 'sha256', nice: 0 });
    assert.equal(key.length, 32);
  });
});
