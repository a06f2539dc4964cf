import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { BusMessage, ClusterBus } from './cluster-bus.js';
import { reasonOf, redactUrl } from '../log/redaction.js';

/** NOTIFY payloads are limited to 8000 bytes; larger messages are refused by the caller's fallback. */
const MAX_PAYLOAD_BYTES = 7000;

/**
 * The cluster bus on PostgreSQL LISTEN/NOTIFY: one dedicated connection listens (and reconnects
 * with back-off when the server goes away), publishing goes through a short-lived query. The
 * channel is per schema, so nodes of different deployments on one server never hear each other.
 */
class PostgresBus implements ClusterBus {
  /** Shared by the worker processes of one server: they hear each other over IPC, not here. */
  readonly nodeId: string;
  readonly #url: string;
  readonly #channel: string;
  readonly #onError: (message: string) => void;
  readonly #listeners = new Set<(message: BusMessage) => void>();
  readonly #publisher: pg.Pool;
  #listener: pg.Client | undefined;
  #closed = false;
  #retryMs = 100;

  constructor(options: PostgresBusOptions) {
    this.nodeId = options.nodeId ?? randomBytes(8).toString('hex');
    this.#url = options.url;
    this.#channel = `divan_${options.schema}`.slice(0, 63);
    this.#onError = options.onError ?? (() => undefined);
    this.#publisher = new pg.Pool({ connectionString: options.url, max: 2, application_name: 'divan-bus' });
    this.#publisher.on('error', () => undefined);
  }

  async start(): Promise<void> {
    await this.#listen();
  }

  async #listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url, application_name: 'divan-bus-listener' });
    client.on('notification', (notification) => {
      if (notification.channel !== this.#channel || notification.payload === undefined) return;
      let message: BusMessage;
      try {
        message = JSON.parse(notification.payload) as BusMessage;
      } catch {
        return;
      }
      for (const listener of this.#listeners) {
        try {
          listener(message);
        } catch {
          // One failing subscriber must not starve the others.
        }
      }
    });
    client.on('error', () => this.#reconnect(client));
    client.on('end', () => this.#reconnect(client));
    await client.connect();
    await client.query(`LISTEN ${pg.escapeIdentifier(this.#channel)}`);
    this.#listener = client;
    this.#retryMs = 100;
  }

  #reconnect(client: pg.Client): void {
    if (this.#closed || this.#listener !== client) return;
    this.#listener = undefined;
    client.end().catch(() => undefined);
    const retry = (): void => {
      if (this.#closed) return;
      this.#listen().catch((error: unknown) => {
        this.#onError(`cluster bus cannot listen on ${redactUrl(this.#url)}: ${reasonOf(error, this.#url)}`);
        this.#retryMs = Math.min(this.#retryMs * 2, 5000);
        setTimeout(retry, this.#retryMs).unref();
      });
    };
    setTimeout(retry, this.#retryMs).unref();
  }

  async publish(topic: string, payload: string): Promise<void> {
    if (this.#closed) return;
    const text = JSON.stringify({ topic, payload, from: this.nodeId } satisfies BusMessage);
    if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) throw new RangeError('bus message too large');
    await this.#publisher.query('SELECT pg_notify($1, $2)', [this.#channel, text]);
  }

  subscribe(listener: (message: BusMessage) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const listener = this.#listener;
    this.#listener = undefined;
    await Promise.all([listener?.end().catch(() => undefined), this.#publisher.end().catch(() => undefined)]);
  }
}

interface PostgresBusOptions {
  url: string;
  schema: string;
  nodeId?: string;
  onError?: (message: string) => void;
}

export async function openPostgresBus(options: PostgresBusOptions): Promise<PostgresBus> {
  const bus = new PostgresBus(options);
  try {
    await bus.start();
  } catch (error) {
    await bus.close();
    throw new Error(`cannot listen for cluster messages on PostgreSQL at ${redactUrl(options.url)}: ${reasonOf(error, options.url)}`);
  }
  return bus;
}
