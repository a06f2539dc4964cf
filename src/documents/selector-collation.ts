/**
 * How selectors compare values besides CouchDB's collation (`src/collation/`): `$eq`'s equality.
 * (`_id` compares in Erlang's term order, `mango_json:cmp_raw`: `src/collation/raw-compare.ts`.)
 */
import { compare } from '../collation/compare.js';
import { isObject } from './document-json.js';
import type { Json, JsonObject } from '../json/json.js';

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
