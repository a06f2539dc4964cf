/**
 * A cluster worker for the lock tests: holds named locks through the real `IpcLocks` on its IPC
 * channel, on the test's orders (`{ test: 'acquire' | 'release', name }`), and reports
 * `{ test: 'holding', name, worker }` each time a lock is granted to it.
 */
import cluster from 'node:cluster';

// node --test runs every file under test/, this one too: outside a cluster worker it has nothing to do.
if (!cluster.isWorker) process.exit(0);
import { IpcLocks } from '../../src/cluster/ipc-locks.js';
import type { Release } from '../../src/locks/named-locks.js';

const id = `w${cluster.worker!.id}`;
const locks = new IpcLocks({
  id,
  send: (message) => process.send!(message),
  onMessage: (listener) => process.on('message', listener),
  onClose: (listener) => process.once('disconnect', listener),
});
const held = new Map<string, Release>();

process.on('message', (message: { test?: string; name?: string }) => {
  const name = message.name ?? '';
  if (message.test === 'acquire') {
    void locks.acquire(name).then((release) => {
      held.set(name, release);
      process.send!({ test: 'holding', name, worker: id });
    });
  } else if (message.test === 'release') {
    held.get(name)?.();
    held.delete(name);
  }
});
process.send!({ test: 'up', worker: id });
