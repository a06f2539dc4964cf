import { Worker } from 'node:worker_threads';
import type { Reply, Request } from './protocol.js';

/** Extra time past a call's own limit before a silent worker is taken for hung and replaced. */
const WATCHDOG_GRACE_MS = 5000;

type Answer = Extract<Reply, { type: 'results' | 'errors' }>;

/** One request waiting for, or held by, a worker. */
interface Job {
  readonly key: string;
  /** The request, with the design document's text when `withDdoc`. */
  make(id: number, withDdoc: boolean): Request;
  /** What to answer when the worker died with this job (every call failed as `crash`). */
  failed(reason: string): Answer;
  readonly timeoutMs: number;
  resolve(answer: Answer): void;
}

interface Slot {
  worker: Worker;
  /** Design-document keys this worker was sent (it may have dropped some since: it then asks again). */
  readonly loaded: Set<string>;
  job?: { readonly id: number; readonly job: Job };
  timer?: NodeJS.Timeout;
}

export interface PoolOptions {
  readonly size: () => number;
  readonly maxContexts: () => number;
  /** Told when a worker is replaced (hung or crashed), for the log. */
  readonly onReplace?: (reason: string) => void;
}

/**
 * The sandbox's worker threads, started on first use: jobs wait in one queue and go to an idle
 * worker, preferably one that already holds the design document. A worker that stays silent past
 * a call's time limit plus a grace (its engine would have interrupted the call itself) or that
 * dies is replaced; its job fails as `crash`, no other job is touched, and the main thread never waits.
 */
export class WorkerPool {
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  readonly #options: PoolOptions;
  #nextId = 1;
  #closed = false;

  constructor(options: PoolOptions) {
    this.#options = options;
  }

  run(job: Omit<Job, 'resolve'>): Promise<Answer> {
    if (this.#closed) return Promise.resolve(job.failed('The JavaScript sandbox is shut down.'));
    return new Promise((resolve) => {
      this.#queue.push({ ...job, resolve });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const slots = this.#slots.splice(0);
    for (const job of this.#queue.splice(0)) job.resolve(job.failed('The JavaScript sandbox is shut down.'));
    await Promise.all(slots.map(async (slot) => {
      clearTimeout(slot.timer);
      slot.job?.job.resolve(slot.job.job.failed('The JavaScript sandbox is shut down.'));
      await slot.worker.terminate();
    }));
  }

  #spawn(): Slot {
    const worker = new Worker(new URL('./engine-worker.js', import.meta.url), { workerData: { maxContexts: this.#options.maxContexts() } });
    worker.unref();
    const slot: Slot = { worker, loaded: new Set() };
    worker.on('message', (reply: Reply) => this.#receive(slot, reply));
    worker.on('error', (error) => this.#replace(slot, `The JavaScript worker failed: ${error.message}`));
    worker.on('exit', () => this.#replace(slot, 'The JavaScript worker stopped.'));
    return slot;
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const idle = this.#slots.filter((slot) => slot.job === undefined);
      if (idle.length === 0 && this.#slots.length < Math.max(1, this.#options.size())) {
        const created = this.#spawn();
        this.#slots.push(created);
        idle.push(created);
      }
      if (idle.length === 0) return;
      const job = this.#queue[0]!;
      const slot = idle.find((each) => each.loaded.has(job.key)) ?? idle[0]!;
      this.#queue.shift();
      this.#send(slot, job);
    }
  }

  #send(slot: Slot, job: Job): void {
    const id = this.#nextId++;
    const withDdoc = !slot.loaded.has(job.key);
    slot.loaded.add(job.key);
    slot.job = { id, job };
    this.#arm(slot);
    slot.worker.postMessage(job.make(id, withDdoc));
  }

  #arm(slot: Slot): void {
    clearTimeout(slot.timer);
    const job = slot.job?.job;
    if (!job) return;
    slot.timer = setTimeout(() => this.#replace(slot, `The JavaScript worker gave no sign of life for ${job.timeoutMs + WATCHDOG_GRACE_MS} ms.`), job.timeoutMs + WATCHDOG_GRACE_MS);
    slot.timer.unref();
  }

  #receive(slot: Slot, reply: Reply): void {
    const held = slot.job;
    if (!held || held.id !== reply.id) return;
    if (reply.type === 'beat') return this.#arm(slot);
    if (reply.type === 'missing') {
      slot.loaded.delete(held.job.key);
      return this.#send(slot, held.job);
    }
    clearTimeout(slot.timer);
    slot.job = undefined;
    held.job.resolve(reply);
    this.#dispatch();
  }

  /** Ends a hung or dead worker; its job fails, the queue goes on with a new worker. */
  #replace(slot: Slot, reason: string): void {
    const index = this.#slots.indexOf(slot);
    if (index < 0) return;
    this.#slots.splice(index, 1);
    clearTimeout(slot.timer);
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    void slot.worker.terminate();
    this.#options.onReplace?.(reason);
    const held = slot.job;
    slot.job = undefined;
    held?.job.resolve(held.job.failed(reason));
    this.#dispatch();
  }
}
