import assert from 'node:assert/strict';
import cluster, { type Worker } from 'node:cluster';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { asLockRequest } from '../../../src/cluster/lock-protocol.js';
import { LockService } from '../../../src/cluster/lock-service.js';
import { LocalLocks, type Release } from '../../../src/locks/named-locks.js';
import { untilTrue } from '../../support/workers.js';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'support', 'lock-worker.js');

/** Settles pending promise callbacks and immediates. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('LocalLocks (one process)', () => {
  test('a lock is granted in the order it was asked for, one holder at a time', async () => {
    const locks = new LocalLocks();
    const order: string[] = [];
    const take = (who: string): Promise<Release> => locks.acquire('x').then((release) => (order.push(who), release));
    const first = await take('a');
    const second = take('b');
    const third = take('c');
    await turn();
    assert.deepEqual(order, ['a']);
    first();
    (await second)();
    (await third)();
    assert.deepEqual(order, ['a', 'b', 'c']);
  });

  test('locks of different names are independent', async () => {
    const locks = new LocalLocks();
    const x = await locks.acquire('x');
    const y = await Promise.race([locks.acquire('y'), turn().then(() => undefined)]);
    assert.ok(y, 'y granted while x is held');
    y();
    x();
  });

  test('releasing twice gives the lock up once', async () => {
    const locks = new LocalLocks();
    const first = await locks.acquire('x');
    first();
    const second = await locks.acquire('x');
    first();
    let third = false;
    void locks.acquire('x').then(() => (third = true));
    await turn();
    assert.equal(third, false, 'the second holder still holds it');
    second();
    await turn();
    assert.equal(third, true);
  });
});

describe('LockService (primary) with IpcLocks in real worker processes', () => {
  const service = new LockService();
  const workers: Worker[] = [];
  const holding: string[] = [];

  before(async () => {
    cluster.setupPrimary({ exec: FIXTURE, silent: true });
    for (let i = 0; i < 3; i++) {
      const worker = cluster.fork();
      worker.on('message', (message: { test?: string; name?: string; worker?: string }) => {
        const request = asLockRequest(message);
        if (request) service.handle(worker, request);
        if (message.test === 'holding') holding.push(`${message.worker}:${message.name}`);
      });
      // As the supervisor does (supervisor.ts): a worker gone holds nothing.
      worker.on('disconnect', () => service.forget(worker));
      worker.on('exit', () => service.forget(worker));
      await new Promise<void>((resolve) => worker.once('message', () => resolve()));
      workers.push(worker);
    }
  });

  after(() => {
    for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
  });

  const name = (worker: Worker): string => `w${worker.id}`;
  const acquire = (worker: Worker, lock: string): boolean => worker.send({ test: 'acquire', name: lock });
  const release = (worker: Worker, lock: string): boolean => worker.send({ test: 'release', name: lock });
  const holds = (worker: Worker, lock: string): Promise<void> => untilTrue(async () => holding.includes(`${name(worker)}:${lock}`), 5000);
  const waitingFor = (lock: string, count: number): Promise<void> => untilTrue(async () => service.holderOf(lock).waiting === count, 5000);

  test('one worker at a time holds a lock, granted first come first served', async () => {
    const [a, b, c] = workers;
    acquire(a!, 'fifo');
    await holds(a!, 'fifo');
    acquire(c!, 'fifo');
    await waitingFor('fifo', 1);
    acquire(b!, 'fifo');
    await waitingFor('fifo', 2);
    await new Promise((wait) => setTimeout(wait, 100));
    assert.deepEqual(holding.filter((each) => each.endsWith(':fifo')), [`${name(a!)}:fifo`], 'the others wait');
    release(a!, 'fifo');
    await holds(c!, 'fifo');
    assert.equal(service.holderOf('fifo').worker, c!.id);
    release(c!, 'fifo');
    await holds(b!, 'fifo');
    release(b!, 'fifo');
    await untilTrue(async () => service.holderOf('fifo').worker === undefined, 5000);
  });

  test('locks of different names are held at once by different workers', async () => {
    const [a, b] = workers;
    acquire(a!, 'one');
    acquire(b!, 'two');
    await holds(a!, 'one');
    await holds(b!, 'two');
    release(a!, 'one');
    release(b!, 'two');
  });

  test('a worker killed while it holds a lock, or waits for one, loses both; the next in line gets it', async () => {
    const [a, b, c] = workers;
    acquire(a!, 'death');
    await holds(a!, 'death');
    acquire(b!, 'death');
    await waitingFor('death', 1);
    acquire(c!, 'death');
    await waitingFor('death', 2);
    // b dies waiting: it leaves the queue.
    b!.process.kill('SIGKILL');
    await waitingFor('death', 1);
    // a dies holding it: c, next in line, gets it.
    a!.process.kill('SIGKILL');
    await holds(c!, 'death');
    assert.equal(service.holderOf('death').worker, c!.id);
    assert.ok(!holding.includes(`${name(b!)}:death`));
  });
});
