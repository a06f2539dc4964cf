import assert from 'node:assert/strict';

/** CouchDB 3's shape of an update sequence: the number of updates, a dash, base64url text. */
export const SEQ_SHAPE = /^(\d+)-[A-Za-z0-9_-]+$/;

/** The number before the dash of a sequence Divan sent, after checking its shape. */
export function seqNumber(seq: unknown): number {
  assert.equal(typeof seq, 'string', `a sequence is a string: ${JSON.stringify(seq)}`);
  const match = SEQ_SHAPE.exec(seq as string);
  assert.ok(match, `a sequence is shaped N-<opaque>: ${JSON.stringify(seq)}`);
  return Number(match[1]);
}

const SEQ_MEMBERS = new Set(['seq', 'last_seq', 'update_seq']);

/** A copy of a response body with each sequence member checked and reduced to its number (as text). */
export function bareSeqs<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => bareSeqs(item)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, member]) => [name, SEQ_MEMBERS.has(name) ? String(seqNumber(member)) : bareSeqs(member)]),
  ) as T;
}

/** A raw feed body with each `"seq"`/`"last_seq"` value and eventsource `id:` reduced to its number. */
export function bareSeqText(text: string): string {
  return text.replace(/("(?:seq|last_seq)":"\d+)-[A-Za-z0-9_-]+"/g, '$1"').replace(/^(id: "\d+)-[A-Za-z0-9_-]+"/gm, '$1"');
}
