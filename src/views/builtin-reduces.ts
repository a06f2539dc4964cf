/**
 * CouchDB's built-in reduce functions (`couch_query_servers.erl`), computed natively over the rows
 * of a group: `_count`, `_sum` (numbers, arrays of numbers, objects of those), `_stats` and
 * `_approx_count_distinct` (exact here: distinct encoded keys, which CouchDB estimates with a
 * HyperLogLog). Reduces are computed at query time over the whole group, so no rereduce is needed.
 */
import { CouchError } from '../errors/couch-error.js';
import type { Json, JsonObject } from '../json/json.js';
import { isObject } from '../documents/document-json.js';

export const BUILTIN_REDUCES = ['_count', '_sum', '_stats', '_approx_count_distinct'] as const;

/** CouchDB matches built-ins by prefix (`_sum` also names `_sumfoo`). */
export function builtinOf(source: string): (typeof BUILTIN_REDUCES)[number] | undefined {
  return BUILTIN_REDUCES.find((name) => source.startsWith(name));
}

const SUM_ERROR =
  'The _sum function requires that map values be numbers, arrays of numbers, or objects. Objects cannot be mixed with other data structures. Objects can be arbitrarily nested, provided that the values for all fields are themselves numbers, arrays of numbers, or objects.';

class SumError extends Error {
  constructor(readonly culprit: Json) {
    super(SUM_ERROR);
  }
}

function sumArrays(a: Json[], b: Json[]): Json[] {
  const out: Json[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined) out.push(y!);
    else if (y === undefined) out.push(x);
    else if (typeof x === 'number' && typeof y === 'number') out.push(x + y);
    else throw new SumError(typeof x === 'number' ? y : x);
  }
  return out;
}

function sumValues(value: Json, acc: Json): Json {
  if (typeof value === 'number' && typeof acc === 'number') return acc + value;
  if (Array.isArray(value) && Array.isArray(acc)) return sumArrays(acc, value);
  if (typeof value === 'number' && Array.isArray(acc)) return sumArrays(acc, [value]);
  if (Array.isArray(value) && typeof acc === 'number') return sumArrays([acc], value);
  if (isObject(value)) {
    if (acc === 0) return value;
    if (!isObject(acc)) throw new SumError(value);
    const out: JsonObject = { ...acc };
    for (const [name, member] of Object.entries(value)) out[name] = Object.hasOwn(out, name) ? sumValues(member, out[name]!) : member;
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
  throw new SumError(value);
}

/** `_sum`: a value that cannot be summed gives CouchDB's `builtin_reduce_error` object as the result. */
export function builtinSum(values: readonly Json[]): Json {
  try {
    let acc: Json = 0;
    for (const value of values) acc = sumValues(value, acc);
    return acc;
  } catch (error) {
    if (!(error instanceof SumError)) throw error;
    return { error: 'builtin_reduce_error', reason: SUM_ERROR, caused_by: error.culprit };
  }
}

type Stats = [sum: number, count: number, min: number, max: number, sumsqr: number];

function statsOf(value: Json): Stats | Stats[] {
  if (typeof value === 'number') return [value, 1, value, value, value * value];
  if (Array.isArray(value)) return value.map((item) => statsOf(item) as Stats);
  const text = JSON.stringify(value);
  throw new CouchError(500, 'invalid_value', `The _stats function requires that map values be numbers or arrays of numbers, not '${text}'`);
}

function combine(a: Stats | Stats[], b: Stats | Stats[]): Stats | Stats[] {
  if (Array.isArray(a[0]) || Array.isArray(b[0])) {
    const left = a as Stats[];
    const right = b as Stats[];
    return left.map((stats, i) => (right[i] === undefined ? stats : (combine(stats, right[i]!) as Stats)));
  }
  const [s0, c0, min0, max0, q0] = a as Stats;
  const [s1, c1, min1, max1, q1] = b as Stats;
  return [s0 + s1, c0 + c1, Math.min(min0, min1), Math.max(max0, max1), q0 + q1];
}

const pack = (stats: Stats | Stats[]): Json =>
  Array.isArray(stats[0]) ? (stats as Stats[]).map(pack) : { sum: stats[0] as number, count: stats[1] as number, min: stats[2] as number, max: stats[3] as number, sumsqr: stats[4] as number };

/** `_stats`: sum, count, min, max and sum of squares (per position for arrays). */
export function builtinStats(values: readonly Json[]): Json {
  if (values.length === 0) return { sum: 0, count: 0, min: 0, max: 0, sumsqr: 0 };
  let acc = statsOf(values[0]!);
  for (let i = 1; i < values.length; i++) acc = combine(acc, statsOf(values[i]!));
  return pack(acc);
}

/** The reduction of one group by a built-in; `keys` are the rows' encoded keys. */
export function builtinReduce(name: (typeof BUILTIN_REDUCES)[number], keys: readonly Buffer[], values: readonly Json[]): Json {
  switch (name) {
    case '_count':
      return values.length;
    case '_sum':
      return builtinSum(values);
    case '_stats':
      return builtinStats(values);
    case '_approx_count_distinct':
      return new Set(keys.map((key) => key.toString('latin1'))).size;
  }
}
