import type { Json } from '../../storage/storage.js';

export interface KeyRange {
  startKey?: Json;
  endKey?: Json;
  descending?: boolean;
  inclusiveEnd?: boolean;
  limit?: number;
  skip?: number;
}

/** CouchDB collation of JSON types: null < false < true < numbers < strings < arrays < objects. */
function typeRank(value: Json): number {
  if (value === null) return 0;
  if (value === false) return 1;
  if (value === true) return 2;
  if (typeof value === 'number') return 3;
  if (typeof value === 'string') return 4;
  return Array.isArray(value) ? 5 : 6;
}

/** Compares a string id with a JSON key: strings by code unit order, other types by rank. */
export function compareIdToKey(id: string, key: Json): number {
  const rank = typeRank(key);
  if (rank !== 4) return 4 - rank;
  const other = key as string;
  return id < other ? -1 : id > other ? 1 : 0;
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
