/**
 * Reduced view queries: the range grouped by key (exact, by a prefix of array keys, or all in one
 * group). Built-ins read the partial reductions storage keeps with the index (whole view, array
 * prefixes of 1 to 3 members, exact keys: docs/views.md, "Reduce"); deeper groups, built-ins over
 * values that are not all numbers, and JavaScript reduces reduce the rows at query time, JavaScript
 * in the sandbox in chunks whose results are then rereduced, as CouchDB reduces B-tree nodes.
 */
import { keyEncoder } from '../collation/key-collation.js';
import { CouchError } from '../errors/couch-error.js';
import type { LoopTurns } from '../turns/loop-turns.js';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { ViewAggregate, ViewRow } from '../storage/storage.js';
import { builtinOf, builtinReduce, fromPartialReductions } from './builtin-reduces.js';
import { overflowOf, type ReduceLimit } from './reduce-limit.js';
import type { CheckedArgs } from './view-ranges.js';
import { rangesOf } from './view-ranges.js';
import { scan, type IndexAt } from './view-query.js';
import type { ViewFunctions } from './view-functions.js';

/** Rows per reduce call; bigger groups are reduced per chunk and the results rereduced. */
const REDUCE_CHUNK = 1000;

interface Reducer {
  source: string;
  /** The design document and the view name, for JavaScript reduces. */
  ddoc: JsonObject;
  view: string;
  functions: ViewFunctions;
  log: Logger;
  limit: ReduceLimit;
  /** `{db}/_design/{name}/_view/{view}`, CouchDB's context in the overflow reason. */
  context: string;
}

/** A reduce result that did not shrink (`reduce_limit = true`): its group answers an error row. */
class Overflow {
  constructor(readonly reason: string) {}
}

interface Group {
  key: Json;
  rows: ViewRow[];
}

function groupKey(key: Json, level: CheckedArgs['level']): Json {
  if (level === 'exact') return key;
  if (level === 0) return null;
  return Array.isArray(key) ? key.slice(0, level) : key;
}

async function groupsOf(rows: readonly ViewRow[], args: CheckedArgs, turns: LoopTurns): Promise<Group[]> {
  const groups: Group[] = [];
  let last: Buffer | undefined;
  const encodeKey = keyEncoder(args.collation);
  for (const row of rows) {
    await turns.maybeYield();
    const key = groupKey(row.key, args.level);
    const encoded = args.level === 'exact' ? row.encoded : encodeKey(key);
    if (last !== undefined && last.equals(encoded)) groups[groups.length - 1]!.rows.push(row);
    else groups.push({ key, rows: [row] });
    last = encoded;
  }
  return groups;
}

function failure(outcome: { kind: string; error: Json }): CouchError {
  const error = outcome.error;
  const reason = typeof error === 'string' ? error : JSON.stringify(error);
  return new CouchError(500, outcome.kind === 'compile' ? 'compilation_error' : `reduce_${outcome.kind}_error`, reason);
}

/** The result, or its overflow when it did not shrink and `reduce_limit` is `true` (logged when `log`). */
function checked(reducer: Reducer, args: readonly Json[], result: Json): Json | Overflow {
  const reason = overflowOf(reducer.limit, reducer.source, args, result, reducer.context);
  if (reason === undefined) return result;
  if (reducer.limit.mode === 'log') {
    reducer.log.warning(`reduce_overflow_error: ${reason}`);
    return result;
  }
  return new Overflow(reason);
}

/** Calls the JavaScript reduce once per argument list; a reduce that throws gives null (logged), as couchjs. */
async function callReduce(reducer: Reducer, argLists: Json[][]): Promise<(Json | Overflow)[]> {
  const outcomes = await reducer.functions.call(reducer.ddoc, ['views', reducer.view, 'reduce'], argLists);
  return outcomes.map((outcome, i) => {
    if (outcome.ok) return checked(reducer, argLists[i]!, outcome.value);
    if (outcome.kind !== 'thrown') throw failure(outcome);
    reducer.log.warning(`view ${String(reducer.ddoc['_id'])}/${reducer.view}: reduce function raised ${JSON.stringify(outcome.error)}`);
    return null;
  });
}

/**
 * Reduces every group with a JavaScript function: chunks first, then a rereduce per chunked group;
 * a chunk that overflowed makes its group's overflow without a rereduce, as CouchDB's.
 */
async function reduceWithJs(reducer: Reducer, groups: readonly Group[]): Promise<(Json | Overflow)[]> {
  const calls: Json[][] = [];
  const owners: number[] = [];
  groups.forEach((group, g) => {
    for (let i = 0; i < group.rows.length; i += REDUCE_CHUNK) {
      const chunk = group.rows.slice(i, i + REDUCE_CHUNK);
      calls.push([chunk.map((row) => [row.key, row.id]), chunk.map((row) => row.value), false]);
      owners.push(g);
    }
  });
  const partial = calls.length === 0 ? [] : await callReduce(reducer, calls);
  const perGroup: (Json | Overflow)[][] = groups.map(() => []);
  partial.forEach((value, i) => perGroup[owners[i]!]!.push(value));
  const finals = perGroup.map((values) => values.find((value) => value instanceof Overflow) ?? values[0] ?? null);
  const rereduced = perGroup.map((values, g) => ({ values: values as Json[], g })).filter(({ values, g }) => values.length > 1 && !(finals[g] instanceof Overflow));
  if (rereduced.length > 0) {
    const values = await callReduce(reducer, rereduced.map(({ values: parts }) => [null, parts, true]));
    rereduced.forEach(({ g }, i) => (finals[g] = values[i]!));
  }
  return finals;
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
  // The stored partials group a partitioned index's keys across partitions: a partition reduces its own rows.
  if (builtin === undefined || args.partition !== undefined || !fromPartialReductions(builtin)) return undefined;
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

/** Each group reduced by a built-in, with event-loop turns between groups. */
async function builtinValues(source: string, groups: readonly Group[], turns: LoopTurns): Promise<Json[]> {
  const values: Json[] = [];
  for (const group of groups) {
    await turns.maybeYield();
    values.push(builtinReduce(source, group.rows));
  }
  return values;
}

/** A group's row; an overflowed group's is CouchDB's error row (`fabric_view_row`, then `couch_mrview_http:row_to_json(error, …)`). */
function rowOf(key: Json, value: Json | Overflow): JsonObject {
  if (value instanceof Overflow) return { key: null, error: 'reduce_overflow_error', reason: value.reason };
  return { key, value };
}

/** `{rows}` of a reduced query. */
export async function reduceQuery(index: IndexAt, args: CheckedArgs, reducer: Reducer): Promise<JsonObject> {
  const builtin = builtinOf(reducer.source);
  const quick = await fromPartials(index, args, builtin);
  const limit = args.limit ?? Number.MAX_SAFE_INTEGER;
  if (quick !== undefined) return { rows: quick };
  // With `keys`, each key is its own range: a group never spans two of them.
  const queries = args.keys === undefined ? [args] : args.keys.map((key) => ({ ...args, keys: [key] }));
  const groups: Group[] = [];
  for (const query of queries) groups.push(...(await groupsOf((await scan(index, query, false)).rows, args, index.turns)));
  const selected = groups.slice(args.skip, args.skip + limit);
  const values = builtin !== undefined ? await builtinValues(reducer.source, selected, index.turns) : await reduceWithJs(reducer, selected);
  return { rows: selected.map((group, i) => rowOf(group.key, values[i]!)) };
}
