/**
 * Long loops of one request give the event loop back now and then, so that a large batch
 * (100 000 documents in one `_bulk_docs`) never keeps other requests (`GET /_up`) waiting.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long one request may keep the event loop before it lets others run. */
export const TURN_MS = 10;

/** `items.map(fn)`, letting other work run after every `TURN_MS` of it. */
export async function mapYielding<T, R>(items: readonly T[], fn: (item: T) => R): Promise<R[]> {
  const results: R[] = [];
  let turnStarted = performance.now();
  for (const item of items) {
    results.push(fn(item));
    if (performance.now() - turnStarted > TURN_MS) {
      await nextTurn();
      turnStarted = performance.now();
    }
  }
  return results;
}

/** A JSON array reply body (compact, newline-terminated, as `serialize`), serialised a slice at a time. */
export async function serializeListYielding(items: readonly unknown[]): Promise<Buffer> {
  const parts = await mapYielding(items, (item) => JSON.stringify(item));
  return Buffer.from(`[${parts.join(',')}]\n`, 'utf8');
}
