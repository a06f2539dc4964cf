import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WorkQueue } from '../../../src/crypto/work-queue.js';

class Full extends Error {}

/** A task that finishes when told to, recording when it started. */
function gate(started: string[], name: string): { task: () => Promise<string>; finish: () => void } {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    task: async () => {
      started.push(name);
      await done;
      return name;
    },
    finish: () => finish(),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('WorkQueue: bounded concurrency and a bounded waiting list', () => {
  test('runs at most `concurrency` tasks; the next ones wait and start in arrival order as places free up', async () => {
    const queue = new WorkQueue({ concurrency: 2, maxWaiting: 5 }, () => new Full());
    const started: string[] = [];
    const tasks = ['a', 'b', 'c', 'd'].map((name) => gate(started, name));
    const results = tasks.map(({ task }) => queue.run(task));
    await settle();
    assert.deepEqual(started, ['a', 'b']);
    assert.deepEqual(queue.stats, { running: 2, waiting: 2, completed: 0 });
    tasks[1]!.finish();
    await settle();
    assert.deepEqual(started, ['a', 'b', 'c']);
    for (const { finish } of tasks) finish();
    assert.deepEqual(await Promise.all(results), ['a', 'b', 'c', 'd']);
    assert.deepEqual(queue.stats, { running: 0, waiting: 0, completed: 4 });
  });

  test('one task more than the waiting list holds is refused at once, without running', async () => {
    const queue = new WorkQueue({ concurrency: 1, maxWaiting: 1 }, () => new Full());
    const started: string[] = [];
    const first = gate(started, 'first');
    const second = gate(started, 'second');
    const running = queue.run(first.task);
    const waiting = queue.run(second.task);
    await assert.rejects(queue.run(async () => 'never'), Full);
    await settle();
    assert.deepEqual(started, ['first']);
    first.finish();
    second.finish();
    assert.deepEqual(await Promise.all([running, waiting]), ['first', 'second']);
    assert.equal(await queue.run(async () => 'room again'), 'room again');
  });

  test('a place freed by a failing task goes to the next one', async () => {
    const queue = new WorkQueue({ concurrency: 1, maxWaiting: 1 }, () => new Full());
    const failing = queue.run(async () => {
      throw new Error('boom');
    });
    const next = queue.run(async () => 'next');
    await assert.rejects(failing, /boom/);
    assert.equal(await next, 'next');
    assert.equal(queue.stats.running, 0);
  });

  test('a newcomer never overtakes the waiting list while a place is handed over', async () => {
    const queue = new WorkQueue({ concurrency: 1, maxWaiting: 2 }, () => new Full());
    const started: string[] = [];
    const first = gate(started, 'first');
    const waiter = gate(started, 'waiter');
    void queue.run(first.task);
    const waiting = queue.run(waiter.task);
    first.finish();
    const late = gate(started, 'late');
    const lateRun = queue.run(late.task);
    await settle();
    assert.deepEqual(started, ['first', 'waiter']);
    waiter.finish();
    late.finish();
    await Promise.all([waiting, lateRun]);
    assert.deepEqual(started, ['first', 'waiter', 'late']);
  });

  test('neverRefuse work waits even when the waiting list is full', async () => {
    const queue = new WorkQueue({ concurrency: 1, maxWaiting: 0 }, () => new Full());
    const started: string[] = [];
    const first = gate(started, 'first');
    const running = queue.run(first.task);
    await assert.rejects(queue.run(async () => 'refused'), Full);
    const admin = queue.run(async () => 'admin', { neverRefuse: true });
    first.finish();
    assert.deepEqual(await Promise.all([running, admin]), ['first', 'admin']);
  });

  test('configure: a higher concurrency starts waiting tasks at once; a lower one lets running tasks finish', async () => {
    const queue = new WorkQueue({ concurrency: 1, maxWaiting: 5 }, () => new Full());
    const started: string[] = [];
    const tasks = ['a', 'b', 'c'].map((name) => gate(started, name));
    const results = tasks.map(({ task }) => queue.run(task));
    await settle();
    assert.deepEqual(started, ['a']);
    queue.configure({ concurrency: 3, maxWaiting: 5 });
    await settle();
    assert.deepEqual(started, ['a', 'b', 'c']);
    queue.configure({ concurrency: 1, maxWaiting: 5 });
    const d = gate(started, 'd');
    const dRun = queue.run(d.task);
    tasks[0]!.finish();
    tasks[1]!.finish();
    await settle();
    assert.deepEqual(started, ['a', 'b', 'c'], 'd waits: c still runs and the limit is now 1');
    tasks[2]!.finish();
    await settle();
    assert.deepEqual(started, ['a', 'b', 'c', 'd']);
    d.finish();
    await Promise.all([...results, dRun]);
  });

  test('limits are whole numbers, at least one place to run and none or more to wait', async () => {
    const queue = new WorkQueue({ concurrency: 0, maxWaiting: -3 }, () => new Full());
    assert.equal(await queue.run(async () => 'runs'), 'runs');
  });
});
