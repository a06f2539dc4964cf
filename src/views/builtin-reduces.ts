/**
 * CouchDB's built-in reduce functions (`couch_query_servers.erl`), computed natively over the rows
 * of a group: `_count`, `_sum` (numbers, arrays of numbers, objects of those), `_stats` and
 * `_approx_count_distinct` (exact here: distinct encoded keys, which CouchDB estimates with a
 * HyperLogLog), and CouchDB 3.5's `_top_N`, `_bottom_N`, `_first` and `_last` (ranked-reduces.ts).
 * Reduces are computed at query time over the whole group, so no rereduce is needed.
 */
import { CouchError } from '../errors/couch-error.js';
import type { Json, JsonObject } from '../json/json.js';
import { isObject } from '../documents/document-json.js';
import type { ViewRow } from '../storage/storage.js';
import { BUILTIN_REDUCES } from '../design/builtin-reduce-names.js';
import { rankedReduce } from './ranked-reduces.js';

type Builtin = (typeof BUILTIN_REDUCES)[number];

/** CouchDB matches built-ins by prefix, in its order (`_sum` also names `_sumfoo`). */
export function builtinOf(source: string): Builtin | undefined {
  return BUILTIN_REDUCES.find((name) => source.startsWith(name));
}

/** The built-ins the stored partial reductions answer (the ranking ones read the rows). */
export const fromPartialReductions = (builtin: Builtin): boolean =>
  builtin === '_count' || builtin === '_sum' || builtin === '_stats' || builtin === '_approx_count_distinct';

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
function builtinSum(values: readonly Json[]): Json {
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
/** Stats of one value or of each position of an array (nested arrays nest). */
type StatsTree = { stats: Stats } | { items: StatsTree[] };

/** CouchDB's `invalid_value` (`couch_query_servers.erl`), answered with status 500 as CouchDB does. */
const invalidValue = (reason: string): CouchError => new CouchError(500, 'invalid_value', reason);
const statError = (value: Json): CouchError => invalidValue(`The _stats function requires that map values be numbers or arrays of numbers, not '${JSON.stringify(value)}'`);

/** A map value as stats: a number, an array (per position), or an already reduced `{sum, count, min, max, sumsqr}`. */
function statsOf(value: Json): StatsTree {
  if (typeof value === 'number') return { stats: [value, 1, value, value, value * value] };
  if (Array.isArray(value)) return { items: value.map(statsOf) };
  if (isObject(value)) return { stats: unpackStats(value) };
  throw statError(value);
}

function unpackStats(value: JsonObject): Stats {
  const field = (name: string): number => {
    const member = value[name];
    if (typeof member === 'number') return member;
    if (member === undefined) throw invalidValue(`user _stats input missing required field ${name} (${JSON.stringify(value)})`);
    throw invalidValue(`non-numeric _stats input received for ${name}: ${JSON.stringify(member)}`);
  };
  return [field('sum'), field('count'), field('min'), field('max'), field('sumsqr')];
}

/**
 * CouchDB's `stat_values`: arrays combine position by position and must have the same length
 * (CouchDB's `lists:zipwith` fails on any other); an array never combines with a single value.
 */
function combine(a: StatsTree, b: StatsTree, value: Json): StatsTree {
  if ('items' in a && 'items' in b) {
    if (a.items.length !== b.items.length) throw invalidValue(`The _stats function requires that arrays of map values have the same length, not ${a.items.length} and ${b.items.length}`);
    const values = Array.isArray(value) ? value : [];
    return { items: a.items.map((left, i) => combine(left, b.items[i]!, values[i] ?? null)) };
  }
  if ('stats' in a && 'stats' in b) {
    const [s0, c0, min0, max0, q0] = a.stats;
    const [s1, c1, min1, max1, q1] = b.stats;
    return { stats: [s0 + s1, c0 + c1, Math.min(min0, min1), Math.max(max0, max1), q0 + q1] };
  }
  throw statError(value);
}

const pack = (tree: StatsTree): Json =>
  'items' in tree ? tree.items.map(pack) : { sum: tree.stats[0], count: tree.stats[1], min: tree.stats[2], max: tree.stats[3], sumsqr: tree.stats[4] };

/** `_stats`: sum, count, min, max and sum of squares (per position for arrays). */
export function builtinStats(values: readonly Json[]): Json {
  if (values.length === 0) return { sum: 0, count: 0, min: 0, max: 0, sumsqr: 0 };
  let acc = statsOf(values[0]!);
  for (let i = 1; i < values.length; i++) acc = combine(acc, statsOf(values[i]!), values[i]!);
  return pack(acc);
}

/** The reduction of one group's rows (ascending) by the built-in `source` names. */
export function builtinReduce(source: string, rows: readonly ViewRow[]): Json {
  const values = (): Json[] => rows.map((row) => row.value);
  switch (builtinOf(source)) {
    case '_count':
      return rows.length;
    case '_sum':
      return builtinSum(values());
    case '_stats':
      return builtinStats(values());
    case '_approx_count_distinct':
      return new Set(rows.map((row) => row.encoded.toString('latin1'))).size;
    default:
      return rankedReduce(source, rows);
  }
}
