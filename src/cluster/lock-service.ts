import type { Worker } from 'node:cluster';
import { LockTable } from '../locks/named-locks.js';
import type { LockGrant, LockRequest } from './lock-protocol.js';

interface Holder {
  worker: Worker;
  lock: number;
}

/**
 * The primary's side of the named locks of `[divan] workers` (locks/named-locks.ts): one FIFO queue per
 * name over every worker's requests, granted over the IPC channel. A worker that dies or whose
 * channel closes holds nothing any more: its locks pass to the next in line, so a worker killed
 * while it held the SQLite write lease stops no sibling (SQLite itself dropped the file lock with
 * the process).
 */
export class LockService {
  readonly #table = new LockTable<Holder>((_name, holder) => this.#grant(holder));
  /** Worker id → its requests by number, each with the name it asked for. */
  readonly #requests = new Map<number, Map<number, { name: string; holder: Holder }>>();

  handle(worker: Worker, message: LockRequest): void {
    let mine = this.#requests.get(worker.id);
    if (message.divan === 'lock') {
      if (!worker.isConnected()) return;
      if (mine === undefined) this.#requests.set(worker.id, (mine = new Map()));
      const holder: Holder = { worker, lock: message.lock };
      mine.set(message.lock, { name: message.name, holder });
      this.#table.request(message.name, holder);
      return;
    }
    const request = mine?.get(message.lock);
    if (request === undefined) return;
    mine!.delete(message.lock);
    this.#table.release(request.name, request.holder);
  }

  /** Releases every lock of `worker` and withdraws its waiting requests (it died or disconnected). */
  forget(worker: Worker): void {
    if (!this.#requests.delete(worker.id)) return;
    this.#table.releaseWhere((holder) => holder.worker === worker);
  }

  /** Which worker holds lock `name` and how many wait for it (observability, tests). */
  holderOf(name: string): { worker: number | undefined; waiting: number } {
    const queue = this.#table.queueOf(name);
    return { worker: queue[0]?.worker.id, waiting: Math.max(0, queue.length - 1) };
  }

  #grant(holder: Holder): void {
    const message: LockGrant = { divan: 'granted', lock: holder.lock };
    // A channel closed meanwhile: the worker is going, and 'disconnect' releases what it held.
    if (!holder.worker.isConnected()) return void queueMicrotask(() => this.forget(holder.worker));
    holder.worker.send(message, (error: Error | null) => (error ? this.forget(holder.worker) : undefined));
  }
}
