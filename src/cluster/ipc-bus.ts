import type { BusMessage, ClusterBus } from './cluster-bus.js';
import { asToWorker, type WorkerChannel } from './worker-protocol.js';

/** A publish not confirmed by then is given up on (a wedged worker), with a warning. */
const DELIVERY_TIMEOUT_MS = 5000;

/**
 * The cluster bus between the worker processes of one server, through the primary process (see
 * supervisor.ts). `publish` resolves once every other live worker has applied the message, so a
 * request that changed a password is answered only after no worker can accept the old one.
 * Messages that arrive before anyone subscribed (the worker is still starting) are kept and
 * delivered at `subscribe`: a worker cannot answer a request before it subscribed.
 */
export class IpcBus implements ClusterBus {
  readonly nodeId: string;
  readonly #channel: WorkerChannel;
  readonly #listeners = new Set<(message: BusMessage) => void>();
  readonly #waiting = new Map<number, { resolve: () => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  #early: BusMessage[] | undefined = [];
  #seq = 0;
  #closed = false;

  constructor(channel: WorkerChannel) {
    this.nodeId = channel.id;
    this.#channel = channel;
    channel.onMessage((value) => this.#received(value));
    this.#send({ divan: 'ready' });
  }

  #received(value: unknown): void {
    const message = asToWorker(value);
    if (message?.divan === 'published') {
      const waiting = this.#waiting.get(message.seq);
      this.#waiting.delete(message.seq);
      if (waiting) clearTimeout(waiting.timer);
      waiting?.resolve();
    } else if (message?.divan === 'relay') {
      const wire: BusMessage = { topic: message.topic, payload: message.payload, from: message.from };
      if (this.#early) this.#early.push(wire);
      else this.#deliver(wire);
      this.#send({ divan: 'delivered', relay: message.relay });
    }
  }

  #deliver(wire: BusMessage): void {
    for (const listener of this.#listeners) {
      try {
        listener(wire);
      } catch {
        // One failing subscriber must not starve the others.
      }
    }
  }

  #send(message: Parameters<WorkerChannel['send']>[0]): void {
    if (this.#closed) return;
    try {
      this.#channel.send(message);
    } catch {
      // The primary is gone: this worker is being stopped.
    }
  }

  publish(topic: string, payload: string): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const seq = ++this.#seq;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(seq);
        reject(new Error(`not confirmed by every worker within ${DELIVERY_TIMEOUT_MS} ms`));
      }, DELIVERY_TIMEOUT_MS);
      timer.unref();
      this.#waiting.set(seq, { resolve, reject, timer });
      this.#send({ divan: 'publish', seq, topic, payload });
    });
  }

  subscribe(listener: (message: BusMessage) => void): () => void {
    this.#listeners.add(listener);
    const early = this.#early;
    this.#early = undefined;
    for (const wire of early ?? []) this.#deliver(wire);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const { resolve, timer } of this.#waiting.values()) {
      clearTimeout(timer);
      resolve();
    }
    this.#waiting.clear();
  }
}
