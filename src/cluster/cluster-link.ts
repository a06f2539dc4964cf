import type { Logger } from '../log/logger.js';
import type { ClusterBus } from './cluster-bus.js';
import { DBS_PER_MESSAGE, decodeMessage, encodeMessage, type ClusterMessage, type ClusterTopic } from './messages.js';

/** One handler per topic; each receives the decoded message of its topic. */
export type MessageHandlers = { [T in ClusterTopic]: (message: Extract<ClusterMessage, { topic: T }>) => void };

/**
 * A node's typed end of the cluster bus: publishes messages (best effort: a failed publish is
 * logged, never turned into a request error; a lost credential invalidation is a warning because
 * other nodes then keep a stale user until their cache entry expires) and hands other nodes'
 * messages to the handler of their topic. A node hears its own messages on PostgreSQL; they are skipped.
 */
export class ClusterLink {
  readonly #bus: ClusterBus;
  readonly #log: Logger;

  constructor(bus: ClusterBus, log: Logger) {
    this.#bus = bus;
    this.#log = log;
  }

  publish(message: ClusterMessage): void {
    const messages = message.topic === 'db' ? sliceDbs(message.dbs) : [message];
    for (const each of messages) {
      const { topic, payload } = encodeMessage(each);
      this.#bus.publish(topic, payload).catch((error: unknown) => {
        const line = `could not tell other nodes (${topic}): ${(error as Error).message}`;
        if (topic === 'users') this.#log.warning(line);
        else this.#log.debug(line);
      });
    }
  }

  receive(handlers: MessageHandlers): () => void {
    return this.#bus.subscribe((wire) => {
      if (wire.from === this.#bus.nodeId) return;
      const message = decodeMessage(wire.topic, wire.payload);
      if (!message) {
        this.#log.warning(`ignored a malformed cluster message on ${wire.topic}`);
        return;
      }
      (handlers[message.topic] as (message: ClusterMessage) => void)(message);
    });
  }

  close(): Promise<void> {
    return this.#bus.close();
  }
}

function sliceDbs(dbs: readonly string[]): ClusterMessage[] {
  const slices: ClusterMessage[] = [];
  for (let i = 0; i < dbs.length; i += DBS_PER_MESSAGE) slices.push({ topic: 'db', dbs: dbs.slice(i, i + DBS_PER_MESSAGE) });
  return slices;
}
