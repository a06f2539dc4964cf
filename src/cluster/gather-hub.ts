/**
 * The primary's side of gathering (gather.ts): sends a worker's question to every answering
 * worker, collects the answers and gives the asker the list once all came, or once the time is up.
 * A worker that dies meanwhile, or whose channel is closed, is left out at once; one that does not
 * answer in time is left out with a warning, so an endpoint never waits on a wedged sibling.
 */
import type { Json } from '../json/json.js';
import type { Gathered } from './gather.js';
import type { GatherToPrimary, GatherToWorker } from './gather-protocol.js';
import type { KeptAnswers } from './kept-answers.js';

/** A worker as the hub reaches it (a node:cluster `Worker` is one). */
export interface GatherPeer {
  send(message: GatherToWorker, callback: (error: Error | null) => void): unknown;
}

interface GatherHubOptions {
  /** How long a gather waits for the slowest worker. */
  timeoutMs: number;
  warn(line: string): void;
  /** Topics whose last answers outlive their worker. */
  kept?: KeptAnswers;
}

interface Pending {
  asker: string;
  askerPeer: GatherPeer;
  seq: number;
  topic: string;
  waiting: Set<string>;
  replies: Gathered[];
  timer: NodeJS.Timeout;
}

export const GATHER_TIMEOUT_MS = 5000;

export class GatherHub {
  readonly #options: GatherHubOptions;
  /** Workers that answer, by name (`w1`…). */
  readonly #answering = new Map<string, GatherPeer>();
  readonly #pending = new Map<number, Pending>();
  #next = 0;

  constructor(options: GatherHubOptions = { timeoutMs: GATHER_TIMEOUT_MS, warn: () => undefined }) {
    this.#options = options;
  }

  /** A gather message from the worker `name`, reachable as `peer`. */
  received(name: string, peer: GatherPeer, message: GatherToPrimary): void {
    switch (message.divan) {
      case 'answering':
        this.#answering.set(name, peer);
        return;
      case 'gather':
        return this.#ask(name, peer, message.seq, message.topic, message.payload);
      case 'answer':
        return this.#answered(name, message.gather, message);
    }
  }

  /** The worker `name` died or disconnected: it answers no more and is waited for no more. */
  gone(name: string): void {
    this.#answering.delete(name);
    for (const [id, pending] of this.#pending) {
      if (pending.asker === name) this.#drop(id, pending);
      else this.#leaveOut(id, name, (topic) => `${name} exited before it answered ${topic}: left out`);
    }
    this.#options.kept?.gone(name);
  }

  /** Asks every answering worker `topic` for the primary itself: only the kept answers learn from it. */
  refresh(topic: string): void {
    if (this.#answering.size > 0) this.#ask('primary', { send: () => undefined }, 0, topic, null);
  }

  #ask(asker: string, askerPeer: GatherPeer, seq: number, topic: string, payload: Json): void {
    const id = ++this.#next;
    const timer = setTimeout(() => this.#timedOut(id), this.#options.timeoutMs);
    timer.unref();
    const targets = [...this.#answering];
    const pending: Pending = { asker, askerPeer, seq, topic, waiting: new Set(targets.map(([name]) => name)), replies: [], timer };
    this.#pending.set(id, pending);
    const ask: GatherToWorker = { divan: 'ask', gather: id, topic, payload: payload ?? null };
    for (const [name, target] of targets) {
      // A closed channel: the worker is dying, and its 'exit' may come later than this answer should.
      target.send(ask, (error) => (error ? this.#leaveOut(id, name, (topic) => `${name} could not be asked ${topic} (its channel is closed): left out`) : undefined));
    }
    this.#finishIfDone(id, pending);
  }

  #answered(name: string, id: number, message: { value?: Json; error?: string }): void {
    const pending = this.#pending.get(id);
    if (!pending?.waiting.delete(name)) return;
    if (message.error !== undefined) this.#options.warn(`worker ${name} failed to answer ${pending.topic}: ${message.error}`);
    else {
      pending.replies.push({ worker: name, value: message.value ?? null });
      this.#options.kept?.saw(pending.topic, name, message.value ?? null);
    }
    this.#finishIfDone(id, pending);
  }

  #leaveOut(id: number, name: string, warning: (topic: string) => string): void {
    const pending = this.#pending.get(id);
    if (!pending?.waiting.delete(name)) return;
    this.#options.warn(warning(pending.topic));
    this.#finishIfDone(id, pending);
  }

  #timedOut(id: number): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#options.warn(`${[...pending.waiting].join(', ')} did not answer ${pending.topic} within ${this.#options.timeoutMs} ms: left out`);
    pending.waiting.clear();
    this.#finishIfDone(id, pending);
  }

  #finishIfDone(id: number, pending: Pending): void {
    if (pending.waiting.size > 0) return;
    this.#drop(id, pending);
    const replies = [...pending.replies].sort((a, b) => (a.worker < b.worker ? -1 : a.worker > b.worker ? 1 : 0));
    replies.push(...(this.#options.kept?.departedReplies(pending.topic) ?? []));
    pending.askerPeer.send({ divan: 'gathered', seq: pending.seq, replies }, () => undefined);
  }

  #drop(id: number, pending: Pending): void {
    clearTimeout(pending.timer);
    this.#pending.delete(id);
  }
}
