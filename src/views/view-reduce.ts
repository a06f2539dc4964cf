/**
 * Reduced view queries: the range grouped by key (exact, by a prefix of array keys, or all in one
 * group). Built-ins read the partial reductions storage keeps with the index (whole view, array
 * prefixes of 1 to 3 members, exact keys: docs/views.md, "Reduce"); JavaScript reduces combine the
 * reductions stored per block of rows (stored-js-reduce.ts); deeper groups, built-ins over values
 * that are not all numbers and grouped partition queries reduce the rows at query time.
 */
import type { LoopTurns } from '../turns/loop-turns.js';
import type { Json, JsonObject } from '../json/json.js';
import type { ViewAggregate, ViewRow } from '../storage/storage.js';
import { builtinOf, builtinReduce, fromPartialReductions } from './builtin-reduces.js';
import { groupEncoding, groupKey, reduceWithJs, rowOf, type Reducer } from './js-reduce.js';
import { storedJsReduce } from './stored-js-reduce.js';
import type { CheckedArgs } from './view-ranges.js';
import { rangesOf } from './view-ranges.js';
import { scan, type IndexAt } from './view-query.js';

interface Group {
  key: Json;
  rows: ViewRow[];
}

async function groupsOf(rows: readonly ViewRow[], args: CheckedArgs, turns: LoopTurns): Promise<Group[]> {
  const groups: Group[] = [];
  let last: Buffer | undefined;
  for (const row of rows) {
    await turns.maybeYield();
    const key = groupKey(row.key, args.level);
    const encoded = groupEncoding(key, row.encoded, args.level, args.collation);
    if (last !== undefined && last.equals(encoded)) groups[groups.length - 1]!.rows.push(row);
    else groups.push({ key, rows: [row] });
    last = encoded;
  }
  return groups;
}

function builtinValue(builtin: string, totals: ViewAggregate): Json {
  if (builtin === '_count') return totals.count;
  if (builtin === '_sum') return totals.sum;
  if (builtin === '_approx_count_distinct') return totals.distinct ?? 0;
  return { sum: totals.sum, count: totals.count, min: totals.min, max: totals.max, sumsqr: totals.sumsqr };
}

/**
 * A built-in reduce answered from the stored partial reductions (one partial per group, rows only
 * for groups a range cuts); undefined when the values (`_sum`/`_stats` of anything but numbers) or
 * the grouping (deeper than the stored prefix levels) need the rows.
 */
async function fromPartials(index: IndexAt, args: CheckedArgs, builtin: ReturnType<typeof builtinOf>): Promise<JsonObject[] | undefined> {
  if (builtin === undefined || !fromPartialReductions(builtin)) return undefined;
  // The stored partials group a partitioned index's keys across partitions: a partition reduces its own rows.
  if (args.partition !== undefined) return partitionTotal(index, args, builtin);
  const whole = args.level === 0;
  const queries = args.keys === undefined ? [args] : args.keys.map((key) => ({ ...args, keys: [key] }));
  const groups: ViewAggregate[] = [];
  for (const query of queries) {
    await index.turns.maybeYield();
    const paged = !whole && args.keys === undefined;
    const range = { ...rangesOf(query, index.view)[0]!, skip: paged ? args.skip : 0, limit: paged ? args.limit : undefined };
    const found = await index.storage.views.reduce(index.db, index.signature, range, args.level);
    if (found === undefined) return undefined;
    groups.push(...found.filter((totals) => totals.count > 0));
  }
  if ((builtin === '_sum' || builtin === '_stats') && groups.some((totals) => totals.numbers !== totals.count)) return undefined;
  const rows = groups.map((totals) => ({ key: whole ? null : totals.key!, value: builtinValue(builtin, totals) }));
  return args.keys === undefined && !whole ? rows : rows.slice(args.skip, args.skip + (args.limit ?? Number.MAX_SAFE_INTEGER));
}

/**
 * A whole-partition `_count`, `_sum` or `_stats` (no grouping, no `keys`) counted and summed by
 * storage over the partition's key range, without reading its rows out; undefined otherwise, or
 * when `_sum`/`_stats` meet values that are not all numbers.
 */
async function partitionTotal(index: IndexAt, args: CheckedArgs, builtin: NonNullable<ReturnType<typeof builtinOf>>): Promise<JsonObject[] | undefined> {
  if (args.level !== 0 || args.keys !== undefined || builtin === '_approx_count_distinct') return undefined;
  const [totals] = await index.storage.views.aggregate(index.db, index.signature, rangesOf(args, index.view)[0]!);
  if (totals === undefined || ((builtin === '_sum' || builtin === '_stats') && totals.numbers !== totals.count)) return undefined;
  const rows = totals.count === 0 ? [] : [{ key: null, value: builtinValue(builtin, totals) }];
  return rows.slice(args.skip, args.skip + (args.limit ?? Number.MAX_SAFE_INTEGER));
}

/** Each group reduced by a built-in, with event-loop turns between groups. */
async function builtinValues(source: string, groups: readonly Group[], turns: LoopTurns): Promise<Json[]> {
  const values: Json[] = [];
  for (const group of groups) {
    await turns.maybeYield();
    values.push(builtinReduce(source, group.rows));
  }
  return values;
}

/** `{rows}` of a reduced query. */
export async function reduceQuery(index: IndexAt, args: CheckedArgs, reducer: Reducer): Promise<JsonObject> {
  const builtin = builtinOf(reducer.source);
  const quick = builtin === undefined ? await storedJsReduce(index, args, reducer) : await fromPartials(index, args, builtin);
  const limit = args.limit ?? Number.MAX_SAFE_INTEGER;
  if (quick !== undefined) return { rows: quick };
  // With `keys`, each key is its own range: a group never spans two of them.
  const queries = args.keys === undefined ? [args] : args.keys.map((key) => ({ ...args, keys: [key] }));
  const groups: Group[] = [];
  for (const query of queries) groups.push(...(await groupsOf((await scan(index, query, false)).rows, args, index.turns)));
  const selected = groups.slice(args.skip, args.skip + limit);
  const values = builtin !== undefined ? await builtinValues(reducer.source, selected, index.turns) : await reduceWithJs(reducer, selected, index.turns);
  return { rows: selected.map((group, i) => rowOf(group.key, values[i]!)) };
}
