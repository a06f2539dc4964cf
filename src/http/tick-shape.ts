import { executionAsyncResource } from 'node:async_hooks';

/**
 * Keeps one entry of Node's `process.nextTick` queue alive for the life of the process, and with it
 * the hidden classes (V8 maps) that every entry shares. Without it, a server that has once been idle
 * pays about 230 ns more for every `process.nextTick`, and Node's HTTP and stream code calls it
 * several times per request (docs/performance.md, "An idle server's slow nextTick").
 *
 * Why it happens (Node 20, V8 11.3):
 * - Node builds each entry as `{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback, args }`.
 * - For a computed key in an object literal, V8 remembers the hidden class it met. Its runtime turns
 *   that record megamorphic for good as soon as it meets any other class, and a class that was
 *   collected counts as another class.
 * - Ordinary full collections retain such classes for a while. The collections of V8's memory
 *   reducer, which runs when the process idles, do not. With no entry queued at that moment, the
 *   entries' classes die, the next entry gets new ones, and from then on every entry is built by the
 *   runtime: 30 → 260 ns a call.
 * - An entry that stays alive keeps its class, and the chain of classes before it, alive.
 */
let pinned: object | undefined;
let scheduled = false;

export function keepTickEntryShape(): void {
  if (scheduled) return;
  scheduled = true;
  // Inside a nextTick callback, the current async resource is that callback's queue entry.
  process.nextTick(() => {
    pinned = executionAsyncResource();
  });
}

/** The entry being kept (tests check that it is a queue entry). */
export function keptTickEntry(): object | undefined {
  return pinned;
}
