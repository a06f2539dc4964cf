// A view query from what a person typed: CouchDB's query parameters (JSON-encoded where CouchDB
// wants JSON), and `keys` for a POST body. Pure, so the page and the tests share it.
import { parseJson } from './format.js';
import { parseCount } from './mango-query.js';

/** The reduce functions CouchDB runs natively; anything else is JavaScript. */
export const BUILTIN_REDUCES = ['_count', '_sum', '_stats', '_approx_count_distinct'];

export const DEFAULT_MAP = 'function (doc) {\n  emit(doc._id, 1);\n}';

/**
 * @typedef {{ key: string, keys: string, startkey: string, endkey: string, inclusiveEnd: boolean, reduce: boolean,
 *   groupLevel: string, includeDocs: boolean, limit: string, skip: string, descending: boolean, hasReduce: boolean }} ViewInput
 * @typedef {{ ok: true, params: Record<string, string>, keys: unknown[] | undefined } | { ok: false, field: string, error: string }} ViewQuery
 */

/**
 * @param {ViewInput} input
 * @returns {ViewQuery}
 */
export function viewQuery(input) {
  /** @type {Record<string, string>} */
  const params = {};
  for (const name of /** @type {const} */ (['key', 'startkey', 'endkey'])) {
    const text = input[name].trim();
    if (text === '') continue;
    const parsed = parseJson(text);
    if (!parsed.ok) return { ok: false, field: name, error: `The ${name} is JSON: a string needs quotes, like "apple" (${parsed.error}).` };
    params[name] = JSON.stringify(parsed.value);
  }
  let keys;
  if (input.keys.trim() !== '') {
    const parsed = parseJson(input.keys);
    if (!parsed.ok || !Array.isArray(parsed.value)) return { ok: false, field: 'keys', error: 'The keys are a JSON array, like ["a", "b"].' };
    keys = parsed.value;
  }
  const limit = parseCount(input.limit, 'limit');
  if (!limit.ok) return limit;
  const skip = parseCount(input.skip, 'skip');
  if (!skip.ok) return skip;
  const groupLevel = parseCount(input.groupLevel, 'group level');
  if (!groupLevel.ok) return groupLevel;
  const reduce = input.hasReduce && input.reduce;
  if (reduce && input.includeDocs) return { ok: false, field: 'include_docs', error: 'Documents come with the rows of the map only: turn off reduce to include them.' };
  if (!reduce && groupLevel.value !== undefined) return { ok: false, field: 'group level', error: 'A group level groups the reduced rows: turn on reduce to use it.' };
  if (input.hasReduce) params.reduce = String(reduce);
  if (groupLevel.value !== undefined) params.group_level = String(groupLevel.value);
  if (input.includeDocs) params.include_docs = 'true';
  if (input.descending) params.descending = 'true';
  if (!input.inclusiveEnd) params.inclusive_end = 'false';
  if (limit.value !== undefined) params.limit = String(limit.value);
  if (skip.value !== undefined && skip.value > 0) params.skip = String(skip.value);
  return { ok: true, params, keys };
}

/**
 * A design document with one view set (map and reduce) or, with `view` undefined, unchanged.
 * Other members of the design document are kept.
 *
 * @param {Record<string, any>} ddoc
 * @param {string} name
 * @param {string} map
 * @param {string} reduce empty for none
 */
export function withView(ddoc, name, map, reduce) {
  const views = ddoc.views && typeof ddoc.views === 'object' && !Array.isArray(ddoc.views) ? { ...ddoc.views } : {};
  /** @type {Record<string, string>} */
  const view = { ...(views[name] ?? {}), map };
  if (reduce.trim() === '') delete view.reduce;
  else view.reduce = reduce;
  views[name] = view;
  return { language: 'javascript', ...ddoc, views };
}
