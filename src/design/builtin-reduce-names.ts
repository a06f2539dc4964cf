import type { JsonObject } from '../json/json.js';
import { isObject } from './function-types/function-type.js';

/** CouchDB 3.5's built-in reduces, in the order it matches their names by prefix. */
export const BUILTIN_REDUCES = ['_sum', '_count', '_stats', '_approx_count_distinct', '_top_', '_bottom_', '_first', '_last'] as const;

/** The largest N of `_top_N` and `_bottom_N` (CouchDB's `MAX_RANK`). */
const MAX_RANK = 100;

function rankProblem(digits: string): string | undefined {
  if (!/^[+-]?\d+$/.test(digits)) return 'invalid rank reducer';
  const n = Number(digits);
  return n >= 1 && n <= MAX_RANK ? undefined : `rank value must be between 1 and ${MAX_RANK}`;
}

/**
 * CouchDB's save-time check of the built-in reduces (`couch_mrview:validate`): the reason of its
 * 400 `invalid_design_doc` for an unknown built-in or a rank outside 1..100, or undefined.
 */
export function builtinReduceProblem(ddoc: JsonObject): string | undefined {
  const all = ddoc['views'];
  if (!isObject(all)) return undefined;
  for (const view of Object.values(all)) {
    const source = isObject(view) ? view['reduce'] : undefined;
    if (typeof source !== 'string' || !source.startsWith('_')) continue;
    const builtin = BUILTIN_REDUCES.find((name) => source.startsWith(name));
    if (builtin === undefined) return `\`${source}\` is not a supported reduce function.`;
    const problem = builtin === '_top_' || builtin === '_bottom_' ? rankProblem(source.slice(builtin.length)) : undefined;
    if (problem !== undefined) return problem;
  }
  return undefined;
}
