import type { Logger } from '../log/logger.js';
import type { ClusterBus } from './cluster-bus.js';
import { DBS_PER_MESSAGE, decodeMessage, encodeMessage, type ClusterMessage, type ClusterTopic } from './messages.js';

/** One handler per topic; each receives the decoded message of its topic. */
type MessageHandlers = { [T in ClusterTopic]: (message: Extract<ClusterMessage, { topic: T }>) => void };

/**
 * A bus the link talks on: between the nodes sharing one PostgreSQL store, or between the worker
 * processes of one server (`workers`: they share their configuration files, so configuration
 * changes travel there only).
 */
export interface LinkedBus {
  bus: ClusterBus;
  workers: boolean;
}

/** Topics a request waits for before it is answered; feed wake-ups do not hold up writes. */
const AWAITED = new Set<ClusterTopic>(['users', 'lockout', 'secret', 'totp', 'config']);

/**
 * A process's typed end of the cluster buses: publishes messages (best effort: a failed publish is
 * logged, never turned into a request error; a lost credential invalidation is a warning because
 * other nodes then keep a stale user until their cache entry expires) and hands other processes'
 * messages to the handler of their topic. A node hears its own messages on PostgreSQL; they are
 * skipped. `settled()` lets the HTTP pipeline answer a request only once what it published (a
 * password change, a lockout failure, a configuration change) has reached every other worker.
 */
export class ClusterLink {
  readonly #buses: readonly LinkedBus[];
  readonly #log: Logger;
  readonly #pending = new Set<Promise<void>>();

  constructor(buses: readonly LinkedBus[], log: Logger) {
    this.#buses = buses;
    this.#log = log;
  }

  publish(message: ClusterMessage): void {
    const messages = message.topic === 'db' ? sliceDbs(message.dbs) : [message];
    for (const each of messages) {
      const { topic, payload } = encodeMessage(each);
      for (const { bus, workers } of this.#buses) {
        if (topic === 'config' && !workers) continue;
        const sent = bus.publish(topic, payload).catch((error: unknown) => {
          const line = `could not tell other ${workers ? 'workers' : 'nodes'} (${topic}): ${(error as Error).message}`;
          if (topic === 'users' || topic === 'config') this.#log.warning(line);
          else this.#log.debug(line);
        });
        if (!AWAITED.has(topic)) continue;
        this.#pending.add(sent);
        void sent.then(() => this.#pending.delete(sent));
      }
    }
  }

  /** Resolves once every awaited message published so far was delivered; undefined when none is under way. */
  settled(): Promise<void> | undefined {
    if (this.#pending.size === 0) return undefined;
    return Promise.all([...this.#pending]).then(() => undefined);
  }

  receive(handlers: MessageHandlers): () => void {
    const stops = this.#buses.map(({ bus }) =>
      bus.subscribe((wire) => {
        if (wire.from === bus.nodeId) return;
        const message = decodeMessage(wire.topic, wire.payload);
        if (!message) {
          this.#log.warning(`ignored a malformed cluster message on ${wire.topic}`);
          return;
        }
        (handlers[message.topic] as (message: ClusterMessage) => void)(message);
      }),
    );
    return () => stops.forEach((stop) => stop());
  }

  async close(): Promise<void> {
    await Promise.all(this.#buses.map(({ bus }) => bus.close()));
  }
}

function sliceDbs(dbs: readonly string[]): ClusterMessage[] {
  const slices: ClusterMessage[] = [];
  for (let i = 0; i < dbs.length; i += DBS_PER_MESSAGE) slices.push({ topic: 'db', dbs: dbs.slice(i, i + DBS_PER_MESSAGE) });
  return slices;
}
