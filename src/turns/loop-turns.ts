import { CouchError } from '../errors/couch-error.js';
import { countSlice } from './request-slices.js';

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
 *
 * The loops of every request of the process share the turns: a loop whose slice is used up waits in
 * one queue, and one waiting loop resumes per event-loop turn (after the loop polled for I/O). With
 * K long requests running, a light one so waits about one slice, not K slices, as it would if each
 * loop resumed in the same turn as the others (`setImmediate` callbacks queued before a turn all run
 * in it, back to back).
 *
 * While loops wait for their turn, the slice is also counted for the whole event loop: a loop that
 * starts (a new request, in the poll phase after a resumed loop's slice) or runs on gives its turn
 * once the event loop has run `sliceMs` since the last loop resumed, after at most `sliceMs / 4` of
 * its own. Without it every heavy request arriving in one poll phase ran a slice of its own before
 * the next poll, and a light request waited for all of them. Loops shorter than `sliceMs / 4` (a
 * small bulk answer) never wait behind the queue.
 */
export class LoopTurns {
  readonly #sliceMs: number;
  readonly #now: () => number;
  readonly #signal: AbortSignal | undefined;
  #since: number;
  /** Turns given so far. */
  yields = 0;

  constructor(sliceMs = DEFAULT_SLICE_MS, now: () => number = () => performance.now(), signal?: AbortSignal) {
    this.#sliceMs = sliceMs;
    this.#now = now;
    this.#signal = signal;
    this.#since = now();
  }

  /** The request's signal: for work this loop hands elsewhere (a sandbox job), to drop once the client left. */
  get signal(): AbortSignal | undefined {
    return this.#signal;
  }

  /** Turns of the default slice that stop once `signal` aborts (the client of the request went away). */
  static until(signal: AbortSignal | undefined): LoopTurns {
    return new LoopTurns(DEFAULT_SLICE_MS, () => performance.now(), signal);
  }

  /** Resolves at once, or after one event-loop turn when the slice is used up; rejects once the signal aborted. */
  async maybeYield(): Promise<void> {
    if (this.#signal?.aborted) throw clientGone();
    const now = this.#now();
    const own = now - this.#since;
    if (own < this.#sliceMs && !(own >= this.#sliceMs / 4 && othersWaitedSince(now, this.#sliceMs))) return;
    this.yields++;
    if (this.#signal !== undefined) countSlice(this.#signal);
    await nextSlice();
    this.#since = this.#now();
    lastResumedAt = this.#since;
    if (this.#signal?.aborted) throw clientGone();
  }
}

/**
 * How long a loop runs before it gives a turn. Short enough that a light request waits a few
 * milliseconds of CPU behind heavy ones, long enough that a turn (about 10 µs) stays under 1 %.
 */
const DEFAULT_SLICE_MS = 4;

/** Loops waiting for their next slice, first come first served. */
const waiting: (() => void)[] = [];
let releasing = false;
/** When the last waiting loop resumed: the start of the event loop's current slice while loops wait. */
let lastResumedAt = 0;

/** Whether loops wait for a turn and the event loop has run a whole slice since the last one resumed. */
function othersWaitedSince(now: number, sliceMs: number): boolean {
  return releasing && now - lastResumedAt >= sliceMs;
}

function nextSlice(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (releasing) return;
    releasing = true;
    setImmediate(releaseOne);
  });
}

/**
 * Resumes the longest-waiting loop, which runs its slice once this callback returns; the next one
 * waits for the next event-loop turn (an immediate queued from an immediate runs only after the
 * loop polled for I/O again), so light requests are served between any two slices.
 */
function releaseOne(): void {
  waiting.shift()?.();
  if (waiting.length > 0) setImmediate(releaseOne);
  else releasing = false;
}

/**
 * Why a scan stopped when its client closed the connection. Nobody reads the answer; a CouchError
 * so that it is not logged as a server failure (499 is nginx's "client closed request").
 */
export function clientGone(): CouchError {
  return new CouchError(499, 'client_closed_request', 'The client closed the connection before the answer.');
}
