/**
 * JavaScript reduce calls in the sandbox: rows reduced in chunks, then the chunks' results and any
 * stored block reductions rereduced (`rereduce=true`) into the group's value, as CouchDB reduces its
 * B-tree nodes. `reduce_limit` applies to every call's result, stored ones included.
 */
import { keyEncoder, type KeyCollation } from '../collation/key-collation.js';
import { CouchError } from '../errors/couch-error.js';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { LoopTurns } from '../turns/loop-turns.js';
import { inputSizeOf, overflowOfSizes, type ReduceLimit } from './reduce-limit.js';
import type { CheckedArgs } from './view-ranges.js';
import type { FunctionOutcome, ViewFunctions } from './view-functions.js';

/** Rows per reduce call; bigger groups are reduced per chunk and the results rereduced. */
const REDUCE_CHUNK = 1000;
/**
 * Values sent to the sandbox in one job at most (a call with more goes alone): a reduce over many
 * rows is several jobs, with an event-loop turn between them and none sent once the client left.
 */
const JOB_VALUES = 1000;

/** How many values a reduce call's argument list carries. */
const valuesIn = (args: Json[]): number => (Array.isArray(args[1]) ? args[1].length : 1);

export interface Reducer {
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

/** A row as a reduce reads it. */
interface ReducedRow {
  key: Json;
  id: string;
  value: Json;
}

/** A stored reduction of some of a group's rows, with the input size of the call that made it. */
interface StoredValue {
  value: Json;
  inputSize: number;
}

export interface JsGroup {
  key: Json;
  rows: ReducedRow[];
  stored?: StoredValue[];
}

export function groupKey(key: Json, level: CheckedArgs['level']): Json {
  if (level === 'exact') return key;
  if (level === 0) return null;
  return Array.isArray(key) ? key.slice(0, level) : key;
}

/** The encoded key a group is told apart by (the row's own encoding for exact groups). */
export const groupEncoding = (key: Json, encoded: Buffer, level: CheckedArgs['level'], collation: KeyCollation): Buffer =>
  level === 'exact' ? encoded : keyEncoder(collation)(key);

function failure(outcome: { kind: string; error: Json }): CouchError {
  const error = outcome.error;
  const reason = typeof error === 'string' ? error : JSON.stringify(error);
  return new CouchError(500, outcome.kind === 'compile' ? 'compilation_error' : `reduce_${outcome.kind}_error`, reason);
}

/** The result, or its overflow when it did not shrink and `reduce_limit` is `true` (logged when `log`). */
function checked(reducer: Reducer, inputOf: () => number, result: Json): Json | Overflow {
  const reason = overflowOfSizes(reducer.limit, inputOf, result, reducer.context);
  if (reason === undefined) return result;
  if (reducer.limit.mode === 'log') {
    reducer.log.warning(`reduce_overflow_error: ${reason}`);
    return result;
  }
  return new Overflow(reason);
}

/**
 * Calls the JavaScript reduce once per argument list, unchecked, in jobs of about `JOB_VALUES`
 * values; a reduce that throws gives null (logged), as couchjs.
 */
export async function rawReduce(reducer: Reducer, argLists: Json[][], turns: LoopTurns): Promise<Json[]> {
  const outcomes: FunctionOutcome[] = [];
  for (let start = 0; start < argLists.length; ) {
    let end = start + 1;
    for (let values = valuesIn(argLists[start]!); end < argLists.length && values + valuesIn(argLists[end]!) <= JOB_VALUES; end++) values += valuesIn(argLists[end]!);
    await turns.maybeYield();
    outcomes.push(...(await reducer.functions.call(reducer.ddoc, ['views', reducer.view, 'reduce'], argLists.slice(start, end), turns.signal)));
    start = end;
  }
  return outcomes.map((outcome) => {
    if (outcome.ok) return outcome.value ?? null;
    if (outcome.kind !== 'thrown') throw failure(outcome);
    reducer.log.warning(`view ${String(reducer.ddoc['_id'])}/${reducer.view}: reduce function raised ${JSON.stringify(outcome.error)}`);
    return null;
  });
}

async function callReduce(reducer: Reducer, argLists: Json[][], turns: LoopTurns): Promise<(Json | Overflow)[]> {
  const values = await rawReduce(reducer, argLists, turns);
  return values.map((value, i) => checked(reducer, () => inputSizeOf(reducer.source, argLists[i]!), value));
}

/**
 * Reduces every group with a JavaScript function: row chunks first, then a rereduce of the chunks'
 * and stored results of a group with more than one; an overflowed part makes its group's overflow
 * without a rereduce, as CouchDB's.
 */
export async function reduceWithJs(reducer: Reducer, groups: readonly JsGroup[], turns: LoopTurns): Promise<(Json | Overflow)[]> {
  const calls: Json[][] = [];
  const owners: number[] = [];
  groups.forEach((group, g) => {
    for (let i = 0; i < group.rows.length; i += REDUCE_CHUNK) {
      const chunk = group.rows.slice(i, i + REDUCE_CHUNK);
      calls.push([chunk.map((row) => [row.key, row.id]), chunk.map((row) => row.value), false]);
      owners.push(g);
    }
  });
  const partial = calls.length === 0 ? [] : await callReduce(reducer, calls, turns);
  const perGroup: (Json | Overflow)[][] = groups.map((group) => (group.stored ?? []).map((stored) => checked(reducer, () => stored.inputSize, stored.value)));
  partial.forEach((value, i) => perGroup[owners[i]!]!.push(value));
  const finals = perGroup.map((values) => values.find((value) => value instanceof Overflow) ?? values[0] ?? null);
  const rereduced = perGroup.map((values, g) => ({ values: values as Json[], g })).filter(({ values, g }) => values.length > 1 && !(finals[g] instanceof Overflow));
  if (rereduced.length > 0) {
    const values = await callReduce(reducer, rereduced.map(({ values: parts }) => [null, parts, true]), turns);
    rereduced.forEach(({ g }, i) => (finals[g] = values[i]!));
  }
  return finals;
}

/** A group's row; an overflowed group's is CouchDB's error row (`fabric_view_row`, then `couch_mrview_http:row_to_json(error, …)`). */
export function rowOf(key: Json, value: Json | Overflow): JsonObject {
  if (value instanceof Overflow) return { key: null, error: 'reduce_overflow_error', reason: value.reason };
  return { key, value };
}

/**
 * Each group's value, and whether they may be kept to answer later queries under the same
 * `reduce_limit` settings: with the check off, or on (`true`) and passed by every group (an
 * overflowed part overflows its group too). Never with `log`, where each query must log again.
 */
export async function reduceToKeep(reducer: Reducer, groups: readonly JsGroup[], turns: LoopTurns): Promise<{ values: (Json | Overflow)[]; keep: boolean }> {
  const values = await reduceWithJs(reducer, groups, turns);
  return { values, keep: reducer.limit.mode !== 'log' && !values.some((value) => value instanceof Overflow) };
}
