import { CouchError } from '../errors/couch-error.js';

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
 *
 * Given the request's `signal`, a turn also checks whether the client went away: the loop then
 * stops with `clientGone` instead of working for nobody.
 */
export class LoopTurns {
  readonly #sliceMs: number;
  readonly #now: () => number;
  readonly #signal: AbortSignal | undefined;
  #since: number;
  /** Turns given so far. */
  yields = 0;

  constructor(sliceMs = 10, now: () => number = () => performance.now(), signal?: AbortSignal) {
    this.#sliceMs = sliceMs;
    this.#now = now;
    this.#signal = signal;
    this.#since = now();
  }

  /** Turns of the default slice that stop once `signal` aborts (the client of the request went away). */
  static until(signal: AbortSignal | undefined): LoopTurns {
    return new LoopTurns(10, () => performance.now(), signal);
  }

  /** Resolves at once, or after one event-loop turn when the slice is used up; rejects once the signal aborted. */
  async maybeYield(): Promise<void> {
    if (this.#signal?.aborted) throw clientGone();
    if (this.#now() - this.#since < this.#sliceMs) return;
    this.yields++;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#since = this.#now();
    if (this.#signal?.aborted) throw clientGone();
  }
}

/**
 * Why a scan stopped when its client closed the connection. Nobody reads the answer; a CouchError
 * so that it is not logged as a server failure (499 is nginx's "client closed request").
 */
function clientGone(): CouchError {
  return new CouchError(499, 'client_closed_request', 'The client closed the connection before the answer.');
}
