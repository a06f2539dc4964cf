/**
 * What a worker answered last, kept after it is gone, for the topics whose answers must outlive
 * their process: the node's counters are monotonic in CouchDB, so a replaced worker's requests stay
 * counted. The primary refreshes the last answers every few seconds (gather-hub.ts `refresh`), so a
 * worker killed without warning loses at most the counts of its last interval.
 */
import type { Json } from '../json/json.js';
import type { Gathered } from './gather.js';

/** Folds a departed worker's last answer into what earlier departed workers left (`undefined` at first). */
type FoldDeparted = (kept: Json | undefined, departed: Json) => Json;

/** The reply that carries every departed worker's folded answer. */
const DEPARTED_WORKERS = 'departed';

export class KeptAnswers {
  readonly #folds: ReadonlyMap<string, FoldDeparted>;
  /** topic → worker → its last answer. */
  readonly #latest = new Map<string, Map<string, Json>>();
  /** topic → the departed workers' answers, folded. */
  readonly #departed = new Map<string, Json>();

  constructor(folds: Record<string, FoldDeparted>) {
    this.#folds = new Map(Object.entries(folds));
  }

  topics(): string[] {
    return [...this.#folds.keys()];
  }

  saw(topic: string, worker: string, value: Json): void {
    if (!this.#folds.has(topic)) return;
    let byWorker = this.#latest.get(topic);
    if (!byWorker) this.#latest.set(topic, (byWorker = new Map()));
    byWorker.set(worker, value);
  }

  gone(worker: string): void {
    for (const [topic, byWorker] of this.#latest) {
      const last = byWorker.get(worker);
      if (last === undefined) continue;
      byWorker.delete(worker);
      this.#departed.set(topic, this.#folds.get(topic)!(this.#departed.get(topic), last));
    }
  }

  /** The reply standing for the departed workers of `topic`, if any departed after answering it. */
  departedReplies(topic: string): Gathered[] {
    const value = this.#departed.get(topic);
    return value === undefined ? [] : [{ worker: DEPARTED_WORKERS, value }];
  }
}
