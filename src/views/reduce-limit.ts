/**
 * CouchDB's `[query_server_config] reduce_limit` (share/server/views.js): a JavaScript reduce whose
 * JSON output is longer than `reduce_limit_threshold` characters and more than the input's length
 * divided by `reduce_limit_ratio` does not shrink; `true` turns its result into a
 * `reduce_overflow_error`, `log` only logs it, `false` turns the check off.
 */
import type { Config } from '../config/config.js';
import type { Json } from '../json/json.js';

export interface ReduceLimit {
  mode: 'true' | 'log' | 'false';
  threshold: number;
  ratio: number;
}

/** The settings as they are now (read at each query, so `_config` changes apply). */
export function reduceLimitOf(config: Config): ReduceLimit {
  const mode = config.getString('query_server_config', 'reduce_limit').trim().toLowerCase();
  const ratio = Number(config.getString('query_server_config', 'reduce_limit_ratio'));
  return {
    mode: mode === 'log' ? 'log' : mode === 'false' ? 'false' : 'true',
    threshold: config.getInteger('query_server_config', 'reduce_limit_threshold'),
    ratio: Number.isFinite(ratio) ? ratio : 2,
  };
}

/** couchjs's input length of a reduce call: its line (`["reduce",[source],kvs]` or `["rereduce",[source],values]`) without the source. */
export function inputSizeOf(source: string, args: readonly Json[]): number {
  const [keys, values, rereduce] = args as [Json, Json[], boolean];
  const inputs = rereduce ? values : (keys as Json[]).map((key, i) => [key, values[i]!]);
  return JSON.stringify([rereduce ? 'rereduce' : 'reduce', [source], inputs]).length - source.length;
}

/**
 * CouchDB's reason when a reduce call's output did not shrink, undefined when it did (or the check
 * is off): the output `[result]` against the call's input length (`inputSizeOf`, only measured for a long output).
 */
export function overflowOfSizes(limit: ReduceLimit, inputOf: () => number, result: Json, context: string): string | undefined {
  if (limit.mode === 'false') return undefined;
  const output = JSON.stringify([result]).length;
  if (output <= limit.threshold) return undefined;
  const input = inputOf();
  if (output * limit.ratio <= input) return undefined;
  return `Reduce output must shrink more rapidly: input size: ${input} output size: ${output} context: ${context}`;
}
