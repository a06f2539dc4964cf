/**
 * Long synchronous loops inside one request (filtering thousands of documents, for instance) hold
 * the event loop, and with it every other client. A `LoopTurns` lets such a loop give the event loop
 * a turn (`setImmediate`) whenever it has run for `sliceMs` since its last turn.
 *
 * @example
 * const turns = new LoopTurns()
 * for (const doc of docs) {
 *   await turns.maybeYield()
 *   match(doc)
 * }
 */
export class LoopTurns {
  readonly #sliceMs: number;
  readonly #now: () => number;
  #since: number;
  /** Turns given so far. */
  yields = 0;

  constructor(sliceMs = 10, now: () => number = () => performance.now()) {
    this.#sliceMs = sliceMs;
    this.#now = now;
    this.#since = now();
  }

  /** Resolves at once, or after one event-loop turn when the slice is used up. */
  async maybeYield(): Promise<void> {
    if (this.#now() - this.#since < this.#sliceMs) return;
    this.yields++;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#since = this.#now();
  }
}
