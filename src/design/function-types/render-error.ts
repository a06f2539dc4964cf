import { javascriptError, osProcessError } from '../../errors/catalog.js';
import { CouchError } from '../../errors/couch-error.js';
import type { Json } from '../../json/json.js';
import type { FailedCall } from './function-type.js';
import { isObject } from './function-type.js';

/** HTTP status of an error name a design function reports (chttpd:error_info); any other name is 500. */
const STATUS_OF: Readonly<Record<string, number>> = { not_found: 404, forbidden: 403, unauthorized: 401, bad_request: 400, method_not_allowed: 405, not_acceptable: 406, conflict: 409 };

export const namedError = (error: string, reason: string): CouchError => new CouchError(STATUS_OF[error] ?? 500, error, reason);

const text = (value: Json | undefined): string => (typeof value === 'string' ? value : JSON.stringify(value ?? null));

/**
 * A show or update function that failed, as CouchDB's render.js and chttpd report it: a thrown
 * `{error, reason}` or `["error", name, reason]` is that error; anything else thrown (a bug) is 500
 * `render_error` "function raised error: …"; a call past its time or memory is `os_process_error`.
 */
export function renderErrorOf(failure: FailedCall): CouchError {
  const { error } = failure;
  if (failure.kind === 'compile') return javascriptError('compilation_error', text(error));
  if (failure.kind !== 'thrown') return osProcessError(isObject(error) ? text(error['message']) : text(error));
  if (Array.isArray(error) && (error[0] === 'error' || error[0] === 'fatal') && typeof error[1] === 'string') return namedError(error[1], text(error[2]));
  if (isObject(error) && typeof error['error'] === 'string' && error['reason'] !== undefined) return namedError(error['error'], text(error['reason']));
  const raised = isObject(error) && typeof error['error'] === 'string' && 'message' in error ? `${error['error']}: ${text(error['message'])}` : text(error);
  return javascriptError('render_error', `function raised error: ${raised}`);
}

/** A function's return CouchDB cannot render (render.js): 500 `render_error`. */
export const undefinedResponse = (kind: 'show' | 'update'): CouchError => javascriptError('render_error', `undefined response from ${kind} function`);
