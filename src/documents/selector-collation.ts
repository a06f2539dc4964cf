/**
 * CouchDB's collation of JSON values, as selectors compare them: by type first (null < false < true <
 * numbers < strings < arrays < objects), then strings by code point (not by ICU collation as
 * CouchDB's `$gt`/`$lt` do), arrays and objects member by member.
 */
import { isObject } from './document-json.js';
import type { Json, JsonObject } from '../json/json.js';

/** CouchDB's rank of JSON types. */
function rank(value: Json): number {
  if (value === null) return 0;
  if (value === false) return 1;
  if (value === true) return 2;
  if (typeof value === 'number') return 3;
  if (typeof value === 'string') return 4;
  return Array.isArray(value) ? 5 : 6;
}

type StringOrder = (a: string, b: string) => number;

const byCodePoint: StringOrder = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Compares two JSON values in CouchDB's collation (strings by code point). */
export function compareJson(a: Json, b: Json): number {
  return compareJsonWith(byCodePoint, a, b);
}

/**
 * Compares two JSON values in CouchDB's collation with strings (and object member names) in the given
 * order: by code point for selectors, by ICU (`Intl.Collator`) to check the view key encoding.
 */
export function compareJsonWith(strings: StringOrder, a: Json, b: Json): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number') return a - (b as number);
  if (typeof a === 'string') return strings(a, b as string);
  if (Array.isArray(a)) {
    const other = b as Json[];
    for (let i = 0; i < Math.min(a.length, other.length); i++) {
      const order = compareJsonWith(strings, a[i]!, other[i]!);
      if (order !== 0) return order;
    }
    return a.length - other.length;
  }
  if (isObject(a)) {
    const ea = Object.entries(a);
    const eb = Object.entries(b as JsonObject);
    for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
      const [ka, va] = ea[i]!;
      const [kb, vb] = eb[i]!;
      const names = strings(ka, kb);
      if (names !== 0) return names;
      const order = compareJsonWith(strings, va, vb);
      if (order !== 0) return order;
    }
    return ea.length - eb.length;
  }
  return 0;
}

/** Erlang's term order of decoded JSON: numbers < false < null < true < objects < arrays < strings. */
function rawRank(value: Json): number {
  if (typeof value === 'number') return 0;
  if (value === false) return 1;
  if (value === null) return 2;
  if (value === true) return 3;
  if (typeof value === 'string') return 6;
  return Array.isArray(value) ? 5 : 4;
}

/**
 * CouchDB's `mango_json:cmp_raw`, which selectors use on `_id`: Erlang's order of the decoded terms
 * (strings by code point; objects as lists of `{name, value}` pairs, member by member).
 */
export function compareRaw(a: Json, b: Json): number {
  const ra = rawRank(a);
  const rb = rawRank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number') return a - (b as number);
  if (typeof a === 'string') return byCodePoint(a, b as string);
  if (Array.isArray(a)) {
    const other = b as Json[];
    for (let i = 0; i < Math.min(a.length, other.length); i++) {
      const order = compareRaw(a[i]!, other[i]!);
      if (order !== 0) return order;
    }
    return a.length - other.length;
  }
  if (isObject(a)) {
    const toList = (object: JsonObject): Json[] => Object.entries(object).map(([name, value]) => [name, value]);
    return compareRaw(toList(a), toList(b as JsonObject));
  }
  return 0;
}

export function equal(a: Json, b: Json): boolean {
  if (rank(a) !== rank(b)) return false;
  if (isObject(a)) {
    const other = b as JsonObject;
    const keys = Object.keys(a);
    return keys.length === Object.keys(other).length && keys.every((key) => Object.hasOwn(other, key) && equal(a[key]!, other[key]!));
  }
  return compareJson(a, b) === 0;
}
