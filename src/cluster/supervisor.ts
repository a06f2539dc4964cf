import cluster, { type Worker } from 'node:cluster';
import { GATHER_TIMEOUT_MS, GatherHub } from './gather-hub.js';
import { METRICS, foldDepartedCounters } from './gathered-metrics.js';
import { KeptAnswers } from './kept-answers.js';
import { asGatherToPrimary } from './gather-protocol.js';
import { closeUntakenConnections } from './handoff-guard.js';
import { LockService } from './lock-service.js';
import { LockoutService } from './lockout-service.js';
import { asToPrimary, type ToPrimary, type ToWorker } from './worker-protocol.js';

export interface Listening {
  address: string;
  port: number;
  tls: boolean;
}

interface SupervisorOptions {
  workers: number;
  /** Added to each worker's environment (the port the primary chose, the host's node id). */
  env: Record<string, string>;
  /** Heavy-lane processes to start beside the workers (docs/workers.md), with their environment added to `env`. */
  lanes?: { count: number; env: Record<string, string> };
  /** Whether each worker also opens the HTTPS listener. */
  tls: boolean;
  /** Once, when every first worker listens. */
  onReady(listening: Listening[]): void;
  /** A worker of the first generation died before it listened: the server cannot start. */
  onStartFailed(reason: string): void;
  warn(line: string): void;
}

interface Relay {
  publisher: Worker;
  seq: number;
  waiting: Set<number>;
}

/** A worker that dies this soon after the previous replacement waits before it is replaced again. */
const RESPAWN_BACKOFF_MS = 1000;

/**
 * The primary process of `[divan] workers`: forks the workers (they share the listening socket
 * through node:cluster), relays cluster messages between them and confirms delivery to the
 * publisher (ipc-bus.ts), gathers answers from all of them (gather-hub.ts), grants named locks
 * (lock-service.ts), admits password attempts under the node's lockout (lockout-service.ts), replaces a worker that dies, and stops them all on `stop()`.
 */
/** How often the primary learns each worker's counters, so a worker killed without warning loses at most this much. */
const KEPT_REFRESH_MS = 2000;

export class Supervisor {
  readonly #options: SupervisorOptions;
  readonly #relays = new Map<number, Relay>();
  readonly #listening = new Map<number, Listening[]>();
  /** Workers that hear cluster messages; only they are waited for. */
  readonly #hearing = new Set<number>();
  readonly #gather: GatherHub;
  readonly #locks = new LockService();
  readonly #lockout = new LockoutService();
  #relaySeq = 0;
  #ready = false;
  #stopping = false;
  #lastRespawn = 0;
  /** The heavy-lane processes among the workers: they answer forwarded requests only and are not waited for at start. */
  readonly #lanes = new Set<number>();

  constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#gather = new GatherHub({ timeoutMs: GATHER_TIMEOUT_MS, warn: options.warn, kept: new KeptAnswers({ [METRICS]: foldDepartedCounters }) });
  }

  start(): void {
    cluster.on('exit', (worker, code, signal) => this.#exited(worker, code, signal));
    for (let i = 0; i < this.#options.workers; i++) this.#fork();
    for (let i = 0; i < (this.#options.lanes?.count ?? 0); i++) this.#fork(true);
    setInterval(() => this.#gather.refresh(METRICS), KEPT_REFRESH_MS).unref();
  }

  #fork(lane = false): Worker {
    const worker = cluster.fork(lane ? { ...this.#options.env, ...this.#options.lanes?.env } : this.#options.env);
    if (lane) this.#lanes.add(worker.id);
    closeUntakenConnections(worker);
    worker.on('message', (value: unknown) => {
      const message = asToPrimary(value);
      if (message) this.#handle(worker, message);
      const gather = message ? undefined : asGatherToPrimary(value);
      if (gather) this.#gather.received(`w${worker.id}`, worker, gather);
    });
    worker.on('disconnect', () => this.#forget(worker));
    return worker;
  }

  #handle(worker: Worker, message: ToPrimary): void {
    switch (message.divan) {
      case 'ready':
        this.#hearing.add(worker.id);
        return;
      case 'publish':
        return this.#publish(worker, message.seq, message.topic, message.payload);
      case 'delivered':
        return this.#delivered(worker.id, message.relay);
      case 'lock':
      case 'unlock':
        return this.#locks.handle(worker, message);
      case 'lockout-admit':
      case 'lockout-settle':
        return this.#lockout.handle(worker, message);
      case 'listening': {
        const seen = this.#listening.get(worker.id) ?? [];
        seen.push({ address: message.address, port: message.port, tls: message.tls });
        this.#listening.set(worker.id, seen);
        return this.#checkReady();
      }
    }
  }

  /** What `worker` held (locks, lockout attempts) passes on: it died or its channel closed. */
  #forget(worker: Worker): void {
    this.#locks.forget(worker);
    this.#lockout.forget(worker);
  }

  #publish(publisher: Worker, seq: number, topic: string, payload: string): void {
    const relay = ++this.#relaySeq;
    const targets = this.#live().filter((worker) => worker !== publisher && this.#hearing.has(worker.id));
    const entry: Relay = { publisher, seq, waiting: new Set(targets.map((worker) => worker.id)) };
    this.#relays.set(relay, entry);
    const message: ToWorker = { divan: 'relay', relay, topic, payload, from: `w${publisher.id}` };
    for (const worker of targets) {
      // A worker whose channel already closed is dying: 'exit' takes it off the waiting list.
      worker.send(message, (error: Error | null) => (error ? this.#delivered(worker.id, relay) : undefined));
    }
    this.#finishIfDelivered(relay, entry);
  }

  #delivered(workerId: number, relay: number): void {
    const entry = this.#relays.get(relay);
    if (!entry) return;
    entry.waiting.delete(workerId);
    this.#finishIfDelivered(relay, entry);
  }

  #finishIfDelivered(relay: number, entry: Relay): void {
    if (entry.waiting.size > 0) return;
    this.#relays.delete(relay);
    if (entry.publisher.isConnected()) entry.publisher.send({ divan: 'published', seq: entry.seq } satisfies ToWorker, () => undefined);
  }

  #live(): Worker[] {
    return Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && worker.isConnected());
  }

  #checkReady(): void {
    if (this.#ready) return;
    const perWorker = this.#options.tls ? 2 : 1;
    const workers = this.#live().filter((worker) => !this.#lanes.has(worker.id));
    if (workers.length < this.#options.workers) return;
    if (!workers.every((worker) => (this.#listening.get(worker.id)?.length ?? 0) >= perWorker)) return;
    this.#ready = true;
    this.#options.onReady(this.#listening.get(workers[0]!.id)!);
  }

  #exited(worker: Worker, code: number | null, signal: string | null): void {
    const lane = this.#lanes.delete(worker.id);
    this.#listening.delete(worker.id);
    this.#hearing.delete(worker.id);
    this.#gather.gone(`w${worker.id}`);
    this.#forget(worker);
    for (const [relay, entry] of this.#relays) {
      if (entry.publisher === worker) this.#relays.delete(relay);
      else this.#delivered(worker.id, relay);
    }
    if (this.#stopping) return;
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (!this.#ready && !lane) {
      this.#options.onStartFailed(`a worker process exited with ${how} while starting`);
      return;
    }
    this.#options.warn(`${lane ? 'heavy-lane process' : 'worker'} ${worker.process.pid} exited with ${how}; starting a replacement`);
    const wait = Math.max(0, this.#lastRespawn + RESPAWN_BACKOFF_MS - Date.now());
    this.#lastRespawn = Date.now() + wait;
    setTimeout(() => {
      if (!this.#stopping) this.#fork(lane);
    }, wait);
  }

  /** Signals every worker to drain and stop; resolves when all have exited (or were killed after `graceMs`). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 15000): Promise<void> {
    this.#stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            const timer = setTimeout(() => worker.process.kill('SIGKILL'), graceMs);
            worker.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            worker.process.kill(signal);
          }),
      ),
    );
  }
}
