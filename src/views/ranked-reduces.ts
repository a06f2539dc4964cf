/**
 * CouchDB 3.5's ranking built-in reduces (`couch_query_servers.erl`): `_top_N` and `_bottom_N`
 * (the N greatest or least distinct values in the collation, greatest or least first) and
 * `_first` and `_last` (the value of the row with the least or greatest key, then document id).
 * They are computed over a group's rows at query time; a group without rows reduces to `[]`, as
 * CouchDB's.
 */
import { compare } from '../collation/compare.js';
import type { Json } from '../json/json.js';
import type { ViewRow } from '../storage/storage.js';

/** `_top_N` (descending) or `_bottom_N` (ascending): values held equal by the collation count once. */
function ranked(values: readonly Json[], n: number, direction: 1 | -1): Json[] {
  const sorted = [...values].sort((a, b) => direction * compare(a, b));
  const out: Json[] = [];
  for (const value of sorted) {
    if (out.length === n) break;
    if (out.length === 0 || compare(out[out.length - 1]!, value) !== 0) out.push(value);
  }
  return out;
}

/** Orders rows as CouchDB's `less_json_ids`: key in the collation (its encoding), then document id. */
function rowOrder(a: ViewRow, b: ViewRow): number {
  return Buffer.compare(a.encoded, b.encoded) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * `_first` keeps the earliest row among equals and `_last` the latest, as CouchDB's folds do, so
 * rows equal in key and id (one document emitting a key twice) resolve by emission order.
 */
function firstOrLast(rows: readonly ViewRow[], last: boolean): Json {
  let best: ViewRow | undefined;
  for (const row of rows) {
    if (best === undefined) best = row;
    else {
      const order = rowOrder(row, best);
      if (last ? order >= 0 : order < 0) best = row;
    }
  }
  return best === undefined ? [] : best.value;
}

/** The reduction of one group's rows (in ascending order) by a ranking built-in named `source`. */
export function rankedReduce(source: string, rows: readonly ViewRow[]): Json {
  if (source.startsWith('_first')) return firstOrLast(rows, false);
  if (source.startsWith('_last')) return firstOrLast(rows, true);
  const top = source.startsWith('_top_');
  const n = Number(source.slice(top ? '_top_'.length : '_bottom_'.length));
  return ranked(rows.map((row) => row.value), n, top ? -1 : 1);
}
