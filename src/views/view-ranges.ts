/**
 * Checks a view query's options against the view (`couch_mrview_util:validate_args`, same texts)
 * and turns its keys into the encoded ranges storage scans: one range, or one per key of `keys`.
 */
import { keyEncoder, type KeyCollation } from '../collation/key-collation.js';
import { queryParseError } from '../errors/query-errors.js';
import { partitionKeyPrefix } from '../databases/partitions.js';
import type { Json } from '../json/json.js';
import type { ViewRange } from '../storage/storage.js';
import type { ViewArgs } from './query-args.js';

/** `exact`: group=true; a number: group by that many members of array keys (0: one group). */
type GroupLevel = number | 'exact';

export interface CheckedArgs extends ViewArgs {
  /** The view's collation: how its keys and the query's bounds are encoded. */
  collation: KeyCollation;
  /** Whether the query reduces (the view has a reduce function and `reduce` is not false). */
  reducing: boolean;
  groupLevel: number;
  level: GroupLevel;
}

function groupLevelOf(args: ViewArgs): GroupLevel {
  if (args.group === undefined || args.group === false) {
    if (args.group === false && args.groupLevel !== undefined && args.groupLevel > 0) {
      throw queryParseError("Can't specify group=false and group_level>0 at the same time");
    }
    return args.groupLevel ?? 0;
  }
  return args.groupLevel ?? 'exact';
}

function sameKeys(keys: Json[], args: ViewArgs): boolean {
  if (keys.length === 0 || (args.startKey === undefined && args.endKey === undefined)) return true;
  const only = JSON.stringify(keys[0]);
  return keys.length === 1 && JSON.stringify(args.startKey) === only && JSON.stringify(args.endKey) === only;
}

/** Document ids compare by their UTF-8 bytes; an absent bound is below (`low`) or above every id. */
function compareDocIds(a: string | undefined, aLow: boolean, b: string | undefined, bLow: boolean): number {
  if (a === undefined || b === undefined) {
    if (a === undefined && b === undefined) return aLow === bLow ? 0 : aLow ? -1 : 1;
    return a === undefined ? (aLow ? -1 : 1) : bLow ? 1 : -1;
  }
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * A range no row can fall in is a 400, as CouchDB's `couch_mrview_util:check_range` answers (views
 * only: `_all_docs` answers no rows): the start must sort before the end in the query's direction,
 * keys by view collation, then document ids (absent ones at the range's far ends).
 */
function checkRange(args: ViewArgs, encode: (key: Json) => Buffer): void {
  if (args.startKey === undefined || args.endKey === undefined) return;
  if (JSON.stringify(args.startKey) === JSON.stringify(args.endKey)) return;
  const byKey = Buffer.compare(encode(args.startKey), encode(args.endKey));
  const fwd = !args.descending;
  const order = byKey !== 0 ? byKey : compareDocIds(args.startDocId, fwd, args.endDocId, !fwd);
  if (fwd && order >= 0) throw queryParseError('No rows can match your key range, reverse your start_key and end_key or set descending=true');
  if (!fwd && order < 0) throw queryParseError('No rows can match your key range, reverse your start_key and end_key or set descending=false');
}

/** CouchDB's checks, in its order; `hasReduce`: the view has a reduce function. */
export function checkArgs(args: ViewArgs, hasReduce: boolean, collation: KeyCollation): CheckedArgs {
  const level = groupLevelOf(args);
  if (!hasReduce && args.reduce === true) throw queryParseError('Reduce is invalid for map-only views.');
  const reducing = hasReduce && args.reduce !== false;
  if (reducing && level !== 'exact' && args.keys !== undefined) throw queryParseError('Multi-key fetches for reduce views must use `group=true`');
  if (args.keys !== undefined && !Array.isArray(args.keys)) throw queryParseError('`keys` must be an array of strings.');
  if (args.keys !== undefined && !sameKeys(args.keys, args)) throw queryParseError('`keys` is incompatible with `key`, `start_key` and `end_key`');
  if (!reducing && level !== 0) throw queryParseError('Invalid use of grouping on a map view.');
  if (reducing && args.includeDocs) throw queryParseError('`include_docs` is invalid for reduce');
  if (reducing && args.conflicts !== undefined) throw queryParseError('`conflicts` is invalid for reduce views.');
  checkRange(args, keyEncoder(collation));
  // A descending map query answers `keys` last first, as CouchDB's `fabric_view_map` reverses them.
  const keys = !reducing && args.descending && args.keys !== undefined ? [...args.keys].reverse() : args.keys;
  return { ...args, collation, keys, reducing, level, groupLevel: level === 'exact' ? Number.MAX_SAFE_INTEGER : level };
}

/** Above every encoded key that starts with a given prefix (every encoded value is self-delimiting, none starts with 0xFF). */
const PAST_PREFIX = Buffer.from([0xff]);

/**
 * The ranges of a partition query: each bound behind the partition's prefix (indexer.ts), an open
 * end at the partition's edge, so the scan never leaves the partition's rows.
 */
function partitionRanges(args: CheckedArgs, view: number, partition: string): ViewRange[] {
  const prefix = partitionKeyPrefix(partition);
  const encode = keyEncoder(args.collation);
  const bound = (key: Json | undefined, high: boolean): Buffer => (key === undefined ? (high ? Buffer.concat([prefix, PAST_PREFIX]) : prefix) : Buffer.concat([prefix, encode(key)]));
  const base = { view, descending: args.descending, skip: 0, startDocId: args.startDocId, endDocId: args.endDocId };
  if (args.keys !== undefined) return args.keys.map((key) => ({ ...base, startKey: bound(key, false), endKey: bound(key, false), inclusiveEnd: true }));
  const startHigh = args.descending;
  return [{ ...base, startKey: bound(args.startKey, startHigh), endKey: bound(args.endKey, !startHigh), inclusiveEnd: args.endKey === undefined ? true : args.inclusiveEnd }];
}

/** The ranges to scan, in answer order: one per key of `keys`, else one. */
export function rangesOf(args: CheckedArgs, view: number): ViewRange[] {
  if (args.partition !== undefined) return partitionRanges(args, view, args.partition);
  const encode = keyEncoder(args.collation);
  const base = { view, descending: args.descending, skip: 0, startDocId: args.startDocId, endDocId: args.endDocId };
  if (args.keys !== undefined) {
    return args.keys.map((key) => ({ ...base, startKey: encode(key), endKey: encode(key), inclusiveEnd: true }));
  }
  return [
    {
      ...base,
      startKey: args.startKey === undefined ? undefined : encode(args.startKey),
      endKey: args.endKey === undefined ? undefined : encode(args.endKey),
      inclusiveEnd: args.inclusiveEnd,
    },
  ];
}
