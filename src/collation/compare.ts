/**
 * CouchDB's collation as a comparison: the order of `encode.ts`'s bytes, walked without encoding
 * whole values. Types, numbers, arrays and objects compare directly; two ASCII strings by the same
 * weights read in place, other strings by their encoded sort keys, so the sign of `compare(a, b)` is always that of
 * `Buffer.compare(encode(a), encode(b))` (the property test in test/unit/collation holds them to it).
 */
import type { Json, JsonObject } from '../json/json.js';
import { encode } from './encode.js';
import { collationWeights, type Weights } from './weights.js';

/** CouchDB's rank of JSON types: null < false < true < numbers < strings < arrays < objects. */
function rank(value: Json): number {
  if (value === null) return 0;
  if (value === false) return 1;
  if (value === true) return 2;
  if (typeof value === 'number') return 3;
  if (typeof value === 'string') return 4;
  return Array.isArray(value) ? 5 : 6;
}

/**
 * Sort keys of strings compared lately. A selector compares each document's value with the same few
 * arguments, so those stay here; the table is emptied when full rather than tracked per entry.
 */
const recentKeys = new Map<string, Buffer>();
const RECENT_KEYS_MAX = 4096;

function sortKey(text: string): Buffer {
  let key = recentKeys.get(text);
  if (key !== undefined) return key;
  key = encode(text);
  if (recentKeys.size >= RECENT_KEYS_MAX) recentKeys.clear();
  recentKeys.set(text, key);
  return key;
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\u0000-\u007f]*$/;
let weights: Weights | undefined;

/** One level of two ASCII strings' sort keys, weight by weight, skipping the ignorable (0) ones. */
function compareLevel(a: string, b: string, level: ArrayLike<number>): number {
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < a.length && level[a.charCodeAt(i)] === 0) i++;
    while (j < b.length && level[b.charCodeAt(j)] === 0) j++;
    if (i === a.length || j === b.length) return i === a.length ? (j === b.length ? 0 : -1) : 1;
    const order = level[a.charCodeAt(i++)]! - level[b.charCodeAt(j++)]!;
    if (order !== 0) return order < 0 ? -1 : 1;
  }
}

/** Two strings in CouchDB's (ICU root) order: -1, 0 (also for strings ICU holds equal) or 1. */
function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  // ASCII needs no normalization and has one weight per character: the sort keys' levels, read in place.
  if (ASCII.test(a) && ASCII.test(b)) {
    const { primary, secondary, tertiary } = (weights ??= collationWeights());
    return compareLevel(a, b, primary) || compareLevel(a, b, secondary) || compareLevel(a, b, tertiary);
  }
  return Buffer.compare(sortKey(a), sortKey(b));
}

function compareArrays(a: readonly Json[], b: readonly Json[]): number {
  const shorter = Math.min(a.length, b.length);
  for (let i = 0; i < shorter; i++) {
    const order = compare(a[i]!, b[i]!);
    if (order !== 0) return order;
  }
  return Math.sign(a.length - b.length);
}

/** Objects member by member in their order: the name, then the value. */
function compareObjects(a: JsonObject, b: JsonObject): number {
  const ea = Object.entries(a);
  const eb = Object.entries(b);
  const shorter = Math.min(ea.length, eb.length);
  for (let i = 0; i < shorter; i++) {
    const order = compareStrings(ea[i]![0], eb[i]![0]) || compare(ea[i]![1], eb[i]![1]);
    if (order !== 0) return order;
  }
  return Math.sign(ea.length - eb.length);
}

/** Compares two JSON values in CouchDB's collation: -1, 0 or 1. */
export function compare(a: Json, b: Json): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (typeof a === 'number') return a < (b as number) ? -1 : a > (b as number) ? 1 : 0;
  if (typeof a === 'string') return compareStrings(a, b as string);
  if (Array.isArray(a)) return compareArrays(a, b as Json[]);
  if (ra === 6) return compareObjects(a as JsonObject, b as JsonObject);
  return 0;
}
