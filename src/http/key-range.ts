import { compareJson } from '../documents/selector-collation.js';
import type { Json } from '../json/json.js';

interface KeyRange {
  startKey?: Json;
  endKey?: Json;
  descending?: boolean;
  inclusiveEnd?: boolean;
  limit?: number;
  skip?: number;
}

/** Compares a string id with a JSON key in CouchDB's collation (one implementation: the selector's). */
export function compareIdToKey(id: string, key: Json): number {
  return compareJson(id, key);
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
