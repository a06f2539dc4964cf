/**
 * Answers collected from every process of this server: with `[divan] workers` each worker keeps
 * its own tasks, replication jobs and counters, so an endpoint that shows the node's (`_active_tasks`,
 * `_scheduler/jobs`, `_stats`…) asks every live worker, itself included, through the primary
 * (gather-hub.ts, ipc-gather.ts). A single process answers from itself only (`LocalGather`), with
 * the same interface, so endpoints do not care which they have.
 */
import type { Json } from '../json/json.js';

/** One process's answer: `worker` names it (`w1`, `w2`…; `main` for a single process). */
export interface Gathered {
  worker: string;
  value: Json;
}

export type Answerer = (payload: Json) => Json | Promise<Json>;

export interface Gather {
  /** How this process answers `topic` when a sibling (or itself) gathers it. */
  answer(topic: string, answerer: Answerer): void;
  /**
   * Every live process's answer to `topic`, this one's included. A worker that dies or does not
   * answer in time is left out (the primary warns), so this never waits without bound.
   */
  gather(topic: string, payload?: Json): Promise<Gathered[]>;
}

/** The answerers registered in one process, by topic. */
export class Answerers {
  readonly #byTopic = new Map<string, Answerer>();

  set(topic: string, answerer: Answerer): void {
    this.#byTopic.set(topic, answerer);
  }

  async answer(topic: string, payload: Json): Promise<Json> {
    const answerer = this.#byTopic.get(topic);
    if (!answerer) throw new Error(`no answer for ${JSON.stringify(topic)}`);
    return answerer(payload);
  }
}

/** The single process (`workers = 1`): the answer is its own. */
export class LocalGather implements Gather {
  readonly #answerers = new Answerers();

  answer(topic: string, answerer: Answerer): void {
    this.#answerers.set(topic, answerer);
  }

  async gather(topic: string, payload: Json = null): Promise<Gathered[]> {
    return [{ worker: 'main', value: await this.#answerers.answer(topic, payload) }];
  }

  /** Nothing to announce or wait for: the same life cycle as `IpcGather`. */
  start(): void {}

  close(): void {}
}
