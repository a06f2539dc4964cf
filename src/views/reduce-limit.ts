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

/**
 * CouchDB's reason when a reduce call's output did not shrink, undefined when it did (or the check
 * is off). The sizes are those couchjs measures: the input line without the function's source
 * (`["reduce",[source],kvs]` or `["rereduce",[source],values]`) and the output `[result]`.
 */
export function overflowOf(limit: ReduceLimit, source: string, args: readonly Json[], result: Json, context: string): string | undefined {
  if (limit.mode === 'false') return undefined;
  const output = JSON.stringify([result]).length;
  if (output <= limit.threshold) return undefined;
  const [keys, values, rereduce] = args as [Json, Json[], boolean];
  const inputs = rereduce ? values : (keys as Json[]).map((key, i) => [key, values[i]!]);
  const line = JSON.stringify([rereduce ? 'rereduce' : 'reduce', [source], inputs]);
  const input = line.length - source.length;
  if (output * limit.ratio <= input) return undefined;
  return `Reduce output must shrink more rapidly: input size: ${input} output size: ${output} context: ${context}`;
}
