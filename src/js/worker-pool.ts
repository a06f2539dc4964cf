import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { HeldMemory, PoolLoad, Reply, Request, WorkerStart } from './protocol.js';

/** Extra time past a call's own limit before a silent worker is taken for hung and replaced. */
const WATCHDOG_GRACE_MS = 5000;

type Answer = Extract<Reply, { type: 'results' | 'errors' }>;

/** One request waiting for, or held by, a worker. */
interface Job {
  /** Whose job it is (a database): each scope has its own queue; the least recently served goes first. */
  readonly scope: string;
  readonly key: string;
  /** The request, with the design document's text when `withDdoc`. */
  make(id: number, withDdoc: boolean): Request;
  /** What to answer when the worker died with this job (every call failed as `crash`). */
  failed(reason: string): Answer;
  readonly timeoutMs: number;
  /** Answers a message the running call sends (a list function's output so far); absent for calls that send none. */
  exchange?(text: string): Promise<string>;
  /** Aborted when nobody waits for the answer any more (the request's client left): a job still queued is dropped unrun. */
  readonly signal?: AbortSignal;
  resolve(answer: Answer): void;
}

/** A job's request was cancelled before a worker took it: `run` rejects with this. */
export class JobCancelled extends Error {}

interface Slot {
  worker: Worker;
  /** Design-document keys this worker was sent (it may have dropped some since: it then asks again). */
  readonly loaded: Set<string>;
  job?: { readonly id: number; readonly job: Job };
  timer?: NodeJS.Timeout;
  held: HeldMemory;
  /** Where exchange answers go, and the word the blocked worker waits on. */
  readonly exchangePort: MessagePort;
  readonly exchangeFlag: Int32Array;
}

/** Scopes whose last turn is remembered (a few per worker would do; databases can be many). */
const MAX_REMEMBERED_SCOPES = 1024;
/** Design-document keys remembered as sent to one worker. */
const MAX_REMEMBERED_KEYS = 4096;

const NOTHING_HELD: HeldMemory = { bytes: 0, contexts: 0, evictions: 0 };

interface PoolOptions {
  readonly size: () => number;
  /** Told when a worker is replaced (hung or crashed), for the log. */
  readonly onReplace?: (reason: string) => void;
}

/**
 * The sandbox's worker threads, started on first use: jobs wait in a queue per scope (database)
 * and a free worker takes the next job of the scope served least recently, so a database with many
 * jobs waiting delays another's by the jobs already running at most; a job goes to an idle worker,
 * preferably one that already holds the design document. A worker that stays silent past a call's
 * time limit plus a grace (its engine would have interrupted the call itself) or that dies is
 * replaced; its job fails as `crash`, no other job is touched, and the main thread never waits.
 */
export class WorkerPool {
  readonly #slots: Slot[] = [];
  /** Waiting jobs by scope. */
  readonly #queues = new Map<string, Job[]>();
  /** When each scope last had a job sent (a turn number), least recent first. */
  readonly #served = new Map<string, number>();
  #turn = 0;
  readonly #options: PoolOptions;
  #nextId = 1;
  #closed = false;
  /** Evictions of workers since replaced, so that the total never goes down. */
  #pastEvictions = 0;
  #jobs = 0;
  #cancelled = 0;

  constructor(options: PoolOptions) {
    this.#options = options;
  }

  /** The job's answer; rejects with `JobCancelled` when its signal aborts before a worker takes it. */
  run(job: Omit<Job, 'resolve'>): Promise<Answer> {
    if (this.#closed) return Promise.resolve(job.failed('The JavaScript sandbox is shut down.'));
    if (job.signal?.aborted) return Promise.reject(new JobCancelled('The request was cancelled.'));
    return new Promise((resolve, reject) => {
      const signal = job.signal;
      const drop = (): void => this.#drop(queued, reject);
      const queued: Job = { ...job, resolve: (answer) => (signal?.removeEventListener('abort', drop), resolve(answer)) };
      signal?.addEventListener('abort', drop, { once: true });
      const queue = this.#queues.get(job.scope);
      if (queue) queue.push(queued);
      else this.#queues.set(job.scope, [queued]);
      this.#dispatch();
    });
  }

  /** A cancelled job leaves its queue unrun; one a worker already runs finishes (its worker is not interrupted). */
  #drop(job: Job, reject: (error: Error) => void): void {
    const queue = this.#queues.get(job.scope);
    const at = queue?.indexOf(job) ?? -1;
    if (at < 0) return;
    queue!.splice(at, 1);
    if (queue!.length === 0) this.#queues.delete(job.scope);
    this.#cancelled++;
    reject(new JobCancelled('The request was cancelled.'));
  }

  /** Workers busy, jobs waiting, and jobs answered and dropped so far. */
  load(): PoolLoad {
    let queued = 0;
    for (const queue of this.#queues.values()) queued += queue.length;
    return { busy: this.#slots.filter((slot) => slot.job !== undefined).length, queued, jobs: this.#jobs, cancelled: this.#cancelled };
  }

  /** What the workers hold now, and how many contexts they evicted since start. */
  held(): HeldMemory {
    let bytes = 0;
    let contexts = 0;
    let evictions = this.#pastEvictions;
    for (const { held } of this.#slots) {
      bytes += held.bytes;
      contexts += held.contexts;
      evictions += held.evictions;
    }
    return { bytes, contexts, evictions };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const slots = this.#slots.splice(0);
    const waiting = [...this.#queues.values()].flat();
    this.#queues.clear();
    for (const job of waiting) job.resolve(job.failed('The JavaScript sandbox is shut down.'));
    await Promise.all(slots.map(async (slot) => {
      clearTimeout(slot.timer);
      slot.exchangePort.close();
      slot.job?.job.resolve(slot.job.job.failed('The JavaScript sandbox is shut down.'));
      await slot.worker.terminate();
    }));
  }

  #spawn(): Slot {
    const { port1, port2 } = new MessageChannel();
    const flag = new SharedArrayBuffer(4);
    const start: WorkerStart = { exchangePort: port2, exchangeFlag: flag };
    const worker = new Worker(new URL('./engine-worker.js', import.meta.url), { workerData: start, transferList: [port2] });
    worker.unref();
    port1.unref();
    const slot: Slot = { worker, loaded: new Set(), held: NOTHING_HELD, exchangePort: port1, exchangeFlag: new Int32Array(flag) };
    worker.on('message', (reply: Reply) => this.#receive(slot, reply));
    worker.on('error', (error) => this.#replace(slot, `The JavaScript worker failed: ${error.message}`));
    worker.on('exit', () => this.#replace(slot, 'The JavaScript worker stopped.'));
    return slot;
  }

  #dispatch(): void {
    while (this.#queues.size > 0) {
      const idle = this.#slots.filter((slot) => slot.job === undefined);
      if (idle.length === 0 && this.#slots.length < Math.max(1, this.#options.size())) {
        const created = this.#spawn();
        this.#slots.push(created);
        idle.push(created);
      }
      if (idle.length === 0) return;
      const job = this.#nextJob();
      const slot = idle.find((each) => each.loaded.has(job.key)) ?? idle[0]!;
      this.#send(slot, job);
    }
  }

  /**
   * The first job of the waiting scope served least recently (never served: first), so that a scope
   * that just had a worker waits behind every other scope with jobs waiting.
   */
  #nextJob(): Job {
    let chosen: string | undefined;
    let oldest = Number.POSITIVE_INFINITY;
    for (const scope of this.#queues.keys()) {
      const served = this.#served.get(scope) ?? -1;
      if (served < oldest) [chosen, oldest] = [scope, served];
    }
    const queue = this.#queues.get(chosen!)!;
    const job = queue.shift()!;
    if (queue.length === 0) this.#queues.delete(chosen!);
    this.#served.delete(chosen!);
    this.#served.set(chosen!, this.#turn++);
    // Only the scopes served most recently are remembered: a forgotten one counts as never served.
    if (this.#served.size > MAX_REMEMBERED_SCOPES) this.#served.delete(this.#served.keys().next().value!);
    return job;
  }

  #send(slot: Slot, job: Job): void {
    const id = this.#nextId++;
    const withDdoc = !slot.loaded.has(job.key);
    // Forgetting only costs sending a design document again; keys are per database, so they can be many.
    if (withDdoc && slot.loaded.size >= MAX_REMEMBERED_KEYS) slot.loaded.clear();
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
    if (reply.type === 'held') {
      slot.held = reply.held;
      return;
    }
    const held = slot.job;
    if (!held || held.id !== reply.id) return;
    if (reply.type === 'beat') return this.#arm(slot);
    if (reply.type === 'exchange') return this.#exchange(slot, held, reply);
    if (reply.type === 'missing') {
      slot.loaded.delete(held.job.key);
      return this.#send(slot, held.job);
    }
    clearTimeout(slot.timer);
    slot.job = undefined;
    this.#jobs++;
    held.job.resolve(reply);
    this.#dispatch();
  }

  /**
   * A message of the running call: the worker waits, blocked, while the job answers it (reading
   * rows, writing to a client), so the watchdog rests until the answer is sent. A job that fails to
   * answer sends the JSON `"abort"`, which ends the call.
   */
  #exchange(slot: Slot, held: NonNullable<Slot['job']>, reply: Extract<Reply, { type: 'exchange' }>): void {
    clearTimeout(slot.timer);
    const answering = held.job.exchange?.(reply.text) ?? Promise.resolve('"abort"');
    void answering.catch(() => '"abort"').then((text) => {
      if (slot.job !== held) return;
      slot.exchangePort.postMessage({ seq: reply.seq, text });
      Atomics.store(slot.exchangeFlag, 0, 1);
      Atomics.notify(slot.exchangeFlag, 0);
      this.#arm(slot);
    });
  }

  /** Ends a hung or dead worker; its job fails, the queue goes on with a new worker. */
  #replace(slot: Slot, reason: string): void {
    const index = this.#slots.indexOf(slot);
    if (index < 0) return;
    this.#slots.splice(index, 1);
    this.#pastEvictions += slot.held.evictions;
    clearTimeout(slot.timer);
    slot.worker.removeAllListeners();
    slot.exchangePort.close();
    slot.worker.on('error', () => undefined);
    void slot.worker.terminate();
    this.#options.onReplace?.(reason);
    const held = slot.job;
    slot.job = undefined;
    held?.job.resolve(held.job.failed(reason));
    this.#dispatch();
  }
}
