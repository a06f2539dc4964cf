import { compare } from '../collation/compare.js';
import type { Json } from '../json/json.js';

interface KeyRange {
  startKey?: Json;
  endKey?: Json;
  descending?: boolean;
  inclusiveEnd?: boolean;
  limit?: number;
  skip?: number;
}

/**
 * Compares a string id with a JSON key: ids among themselves by code point (CouchDB lists
 * `_all_docs` and `_all_dbs` in raw order), a key of another type by CouchDB's collation of types.
 */
export function compareIdToKey(id: string, key: Json): number {
  if (typeof key === 'string') return id < key ? -1 : id > key ? 1 : 0;
  return compare(id, key);
}

/** Applies start/end keys, direction, skip and limit to an ascending list of names. */
export function selectRange(sorted: readonly string[], range: KeyRange): string[] {
  const descending = range.descending ?? false;
  const inclusiveEnd = range.inclusiveEnd ?? true;
  let items = descending ? [...sorted].reverse() : [...sorted];
  const sign = descending ? -1 : 1;
  if (range.startKey !== undefined) items = items.filter((item) => sign * compareIdToKey(item, range.startKey!) >= 0);
  if (range.endKey !== undefined) {
    items = items.filter((item) => {
      const order = sign * compareIdToKey(item, range.endKey!);
      return inclusiveEnd ? order <= 0 : order < 0;
    });
  }
  const skip = range.skip ?? 0;
  return items.slice(skip, range.limit === undefined ? undefined : skip + range.limit);
}
