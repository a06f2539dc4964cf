/**
 * How many slices the loops of each request gave (LoopTurns), counted per response: a request whose
 * loops gave several turns held the event loop for tens of milliseconds, the mark of a heavy
 * request that the heavy lane takes next time (src/cluster/heavy-lane.ts, docs/workers.md).
 */
interface Tally {
  slices: number;
}

const byResponse = new WeakMap<object, Tally>();
const bySignal = new WeakMap<AbortSignal, Tally>();

/** Counts the slices of loops under `signal` for `response` (every signal of one response shares a tally). */
export function tallySignal(signal: AbortSignal, response: object): void {
  let tally = byResponse.get(response);
  if (tally === undefined) byResponse.set(response, (tally = { slices: 0 }));
  bySignal.set(signal, tally);
}

export function countSlice(signal: AbortSignal): void {
  const tally = bySignal.get(signal);
  if (tally !== undefined) tally.slices++;
}

/** Slices the loops of the request answered by `response` gave so far. */
export const slicesOf = (response: object): number => byResponse.get(response)?.slices ?? 0;
