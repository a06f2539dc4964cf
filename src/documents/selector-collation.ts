/**
 * How selectors compare values besides CouchDB's collation (`src/collation/`): `_id` in Erlang's
 * term order (`mango_json:cmp_raw`), and `$eq`'s equality.
 */
import { compare } from '../collation/compare.js';
import { isObject } from './document-json.js';
import type { Json, JsonObject } from '../json/json.js';

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

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

/**
 * `$eq`: `order(a, b) === 0` (CouchDB's collation unless told otherwise), except that two objects at
 * the top are equal when they hold equal members in any order.
 */
export function equal(a: Json, b: Json, order: (a: Json, b: Json) => number = compare): boolean {
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && equal(a[key]!, (b as JsonObject)[key]!, order));
  }
  return order(a, b) === 0;
}
