import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LocalGather } from '../../../src/cluster/gather.js';
import { GatherHub, type GatherPeer } from '../../../src/cluster/gather-hub.js';
import { asGatherToPrimary } from '../../../src/cluster/gather-protocol.js';
import { IpcGather } from '../../../src/cluster/ipc-gather.js';
import type { WorkerChannel } from '../../../src/cluster/worker-protocol.js';

interface Worker {
  gather: IpcGather;
  /** False once the process is "dead": its channel refuses messages. */
  alive: boolean;
}

/**
 * The hub of a primary and the gather ends of `names` workers, joined by an asynchronous channel
 * that copies every message through JSON, as node:cluster's IPC does.
 */
function cluster(names: string[], timeoutMs = 2000): { hub: GatherHub; workers: Map<string, Worker>; warnings: string[] } {
  const warnings: string[] = [];
  const hub = new GatherHub({ timeoutMs, warn: (line) => warnings.push(line) });
  const workers = new Map<string, Worker>();
  const copy = (message: unknown): unknown => JSON.parse(JSON.stringify(message));
  for (const name of names) {
    const listeners: ((message: unknown) => void)[] = [];
    const peer: GatherPeer = {
      send(message, callback) {
        const worker = workers.get(name)!;
        setImmediate(() => {
          if (!worker.alive) return callback(new Error('channel closed'));
          for (const listener of listeners) listener(copy(message));
          callback(null);
        });
        return worker.alive;
      },
    };
    const channel: WorkerChannel = {
      id: name,
      send: (message) =>
        setImmediate(() => {
          const gather = workers.get(name)!.alive ? asGatherToPrimary(copy(message)) : undefined;
          if (gather) hub.received(name, peer, gather);
        }),
      onMessage: (listener) => listeners.push(listener),
      onClose: () => undefined,
    };
    workers.set(name, { gather: new IpcGather(channel), alive: true });
  }
  return { hub, workers, warnings };
}

const never = new Promise<never>(() => undefined);

describe('gathering answers from every worker', () => {
  // The gather timers do not keep a process alive (a server's sockets do): this test's loop needs one.
  let alive: NodeJS.Timeout;
  before(() => (alive = setInterval(() => undefined, 1000)));
  after(() => clearInterval(alive));

  test("the asker gets every answering worker's reply, its own included, each named", async () => {
    const { workers } = cluster(['w1', 'w2', 'w3']);
    for (const [name, worker] of workers) {
      worker.gather.answer('tasks', (payload) => [`${name} task`, payload]);
      worker.gather.start();
    }
    const replies = await workers.get('w2')!.gather.gather('tasks', 'x');
    assert.deepEqual(replies, [
      { worker: 'w1', value: ['w1 task', 'x'] },
      { worker: 'w2', value: ['w2 task', 'x'] },
      { worker: 'w3', value: ['w3 task', 'x'] },
    ]);
  });

  test('a worker that has not said it answers (still starting) is not waited for', async () => {
    const { workers } = cluster(['w1', 'w2']);
    workers.get('w1')!.gather.answer('tasks', () => 'w1');
    workers.get('w1')!.gather.start();
    workers.get('w2')!.gather.answer('tasks', () => never);
    assert.deepEqual(await workers.get('w1')!.gather.gather('tasks'), [{ worker: 'w1', value: 'w1' }]);
  });

  // Bounded well below the asker's own fallback (7 s), which would also answer without the dead worker.
  const promptly = { timeout: 3000 };

  test('a worker that dies while it is asked is left out at once, not after the time limit', promptly, async () => {
    const { hub, workers, warnings } = cluster(['w1', 'w2'], 60000);
    workers.get('w1')!.gather.answer('tasks', () => 'w1');
    workers.get('w2')!.gather.answer('tasks', () => never);
    for (const worker of workers.values()) worker.gather.start();
    await new Promise((settle) => setImmediate(settle));
    const asked = workers.get('w1')!.gather.gather('tasks');
    await new Promise((settle) => setTimeout(settle, 20));
    workers.get('w2')!.alive = false;
    hub.gone('w2');
    assert.deepEqual(await asked, [{ worker: 'w1', value: 'w1' }]);
    assert.deepEqual(warnings, ['w2 exited before it answered tasks: left out']);
  });

  test('a dead worker whose exit is not known yet is left out when its channel refuses the question', promptly, async () => {
    const { workers, warnings } = cluster(['w1', 'w2'], 60000);
    for (const [name, worker] of workers) {
      worker.gather.answer('tasks', () => name);
      worker.gather.start();
    }
    await new Promise((settle) => setImmediate(settle));
    workers.get('w2')!.alive = false;
    assert.deepEqual(await workers.get('w1')!.gather.gather('tasks'), [{ worker: 'w1', value: 'w1' }]);
    assert.deepEqual(warnings, ['w2 could not be asked tasks (its channel is closed): left out']);
  });

  test('a worker that does not answer in time is left out with a warning', async () => {
    const { workers, warnings } = cluster(['w1', 'w2', 'w3'], 100);
    for (const [name, worker] of workers) {
      worker.gather.answer('tasks', () => (name === 'w2' ? never : name));
      worker.gather.start();
    }
    const replies = await workers.get('w1')!.gather.gather('tasks');
    assert.deepEqual(replies.map((reply) => reply.worker), ['w1', 'w3']);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^w2 did not answer tasks within 100 ms/);
  });

  test('a worker whose answer fails is left out with its error in a warning', async () => {
    const { workers, warnings } = cluster(['w1', 'w2']);
    workers.get('w1')!.gather.answer('tasks', () => 'w1');
    workers.get('w2')!.gather.answer('tasks', () => {
      throw new Error('broken');
    });
    for (const worker of workers.values()) worker.gather.start();
    assert.deepEqual(await workers.get('w1')!.gather.gather('tasks'), [{ worker: 'w1', value: 'w1' }]);
    assert.deepEqual(warnings, ['worker w2 failed to answer tasks: broken']);
  });

  test('a worker whose primary is gone answers from itself once closed', async () => {
    const { workers } = cluster(['w1']);
    const worker = workers.get('w1')!;
    worker.gather.answer('tasks', () => 'mine');
    worker.alive = false;
    const asked = worker.gather.gather('tasks');
    worker.gather.close();
    assert.deepEqual(await asked, [{ worker: 'w1', value: 'mine' }]);
  });

  test('a single process answers from itself only', async () => {
    const gather = new LocalGather();
    gather.answer('tasks', (payload) => ({ got: payload }));
    assert.deepEqual(await gather.gather('tasks', 7), [{ worker: 'main', value: { got: 7 } }]);
    await assert.rejects(gather.gather('unknown'), /no answer for "unknown"/);
  });
});
