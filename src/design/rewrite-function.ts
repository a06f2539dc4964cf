/**
 * The function form of `rewrites` (couch_query_servers:rewrite, render.js runRewrite): called with
 * `req`, it returns a path (a string), `{path, query, method, headers, body}`, `{code, headers,
 * body}` to answer at once, or nothing (no rule: 404). Its return is checked as CouchDB checks it.
 */
import { CouchError } from '../errors/couch-error.js';
import type { Json, JsonObject } from '../json/json.js';
import { isObject, type FailedCall } from './function-types/function-type.js';
import { renderErrorOf } from './function-types/render-error.js';

/** What a rewrite function decided. */
export type Rewrite =
  | { readonly kind: 'none' }
  | { readonly kind: 'answer'; readonly code: number; readonly headers: Record<string, string>; readonly body?: string }
  | { readonly kind: 'path'; readonly path: string; readonly query?: Record<string, string>; readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string };

const rewriteError = (reason: string): CouchError => new CouchError(500, 'rewrite_error', reason);

/** `headers` and `query` hold strings only (validate_object_fields). */
function stringsOf(value: Json, what: string): Record<string, string> {
  if (!isObject(value)) throw rewriteError(`bad ${what}`);
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw rewriteError(`object key/value must be strings ${JSON.stringify(key)}=${JSON.stringify(item)}`);
  }
  return value as Record<string, string>;
}

/** couch_query_servers:validate_rewrite_response, field by field. */
function checked(result: JsonObject): Rewrite {
  const { method, path, body, headers, query, code } = result;
  if (method !== undefined && typeof method !== 'string') throw rewriteError('bad method');
  if (path !== undefined && typeof path !== 'string') throw rewriteError('bad path');
  if (body !== undefined && typeof body !== 'string') throw rewriteError('bad body');
  const headerStrings = headers === undefined ? undefined : stringsOf(headers, 'headers');
  const queryStrings = query === undefined ? undefined : stringsOf(query, 'query');
  if (code !== undefined && !(typeof code === 'number' && Number.isInteger(code) && code >= 200 && code < 600)) throw rewriteError('bad code');
  const withBody = body === undefined ? {} : { body };
  if (code !== undefined) return { kind: 'answer', code, headers: headerStrings ?? {}, ...withBody };
  if (path === undefined) throw rewriteError('Rewrite result must produce a new path.');
  return { kind: 'path', path, ...withBody, ...(method === undefined ? {} : { method }), ...(headerStrings ? { headers: headerStrings } : {}), ...(queryStrings ? { query: queryStrings } : {}) };
}

/** The function's return value as a rewrite; a string keeps the request's method. */
export function rewriteOf(value: Json): Rewrite {
  if (value === null || value === false || value === '' || value === 0) return { kind: 'none' };
  if (typeof value === 'string') return { kind: 'path', path: value };
  if (!isObject(value)) throw rewriteError('bad rewrite');
  return checked(value);
}

/**
 * A rewrite function that threw: `{forbidden}` 403 and `{unauthorized}` 401 (as couch_query_servers
 * answers them), a thrown `{error, reason}` that error, anything else 500 `rewrite_error`
 * "function raised error: …" (render.js renderError with "rewrite_error").
 */
export function rewriteErrorOf(failure: FailedCall): CouchError {
  const { error } = failure;
  if (failure.kind === 'thrown' && isObject(error)) {
    if (typeof error['forbidden'] === 'string') return new CouchError(403, 'forbidden', error['forbidden']);
    if (typeof error['unauthorized'] === 'string') return new CouchError(401, 'unauthorized', error['unauthorized']);
  }
  const mapped = renderErrorOf(failure);
  return mapped.error === 'render_error' ? rewriteError(mapped.reason) : mapped;
}
