import { badRequest } from '../errors/catalog.js';

/** Update sequences travel as opaque strings (as CouchDB 3); inside they are integers. */
export function formatSeq(seq: number): string {
  return String(seq);
}

/** Accepts the strings Divan wrote, plain integers, `0` and `now` (resolved by the caller). */
export function parseSince(value: string | null, now: number): number {
  if (value === null || value === '' || value === '0') return 0;
  if (value === 'now') return now;
  const match = /^(\d+)(?:-.*)?$/.exec(value.replace(/^"|"$/g, ''));
  if (!match) throw badRequest(`Malformed sequence supplied in 'since' parameter.`);
  // A sequence past 2^53 is past every real one; an inexact float would reach SQL as a REAL.
  return Math.min(Number(match[1]), Number.MAX_SAFE_INTEGER);
}
