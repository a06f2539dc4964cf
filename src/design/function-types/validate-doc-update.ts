import { compilationError, forbidden, javascriptError, osProcessError, unauthorized } from '../../errors/catalog.js';
import type { CouchError } from '../../errors/couch-error.js';
import type { Json } from '../../json/json.js';
import { isObject, type DesignFunctionType, type FailedCall } from './function-type.js';

const text = (value: Json | undefined): string => (typeof value === 'string' ? value : JSON.stringify(value ?? null));

/**
 * CouchDB's reading of a validation failure (couch_query_servers:validate_doc_update):
 * `{forbidden: m}` is 403, `{unauthorized: m}` 401, any other thrown value 500 `unknown_error`; an
 * `Error` object (a bug in the function) is 500 with its name; a function that ran out of time or
 * memory, or does not compile, fails the write too (never lets it through).
 */
function refusalOf(failure: FailedCall): CouchError {
  const { error } = failure;
  if (failure.kind === 'compile') return compilationError(text(error));
  if (failure.kind !== 'thrown') return osProcessError(isObject(error) ? text(error['message']) : text(error));
  if (isObject(error)) {
    const keys = Object.keys(error);
    if (keys.length === 1 && keys[0] === 'forbidden') return forbidden(text(error['forbidden']));
    if (keys.length === 1 && keys[0] === 'unauthorized') return unauthorized(text(error['unauthorized']));
    if (keys.length === 2 && typeof error['error'] === 'string' && 'message' in error) return javascriptError(error['error'], text(error['message']));
    if (keys.length === 1) return javascriptError('unknown_error', text(error[keys[0]!]));
  }
  return javascriptError('unknown_error', text(error));
}

/** `validate_doc_update`: one function, `(newDoc, oldDoc, userCtx, secObj)`, run before every write. */
export const validateDocUpdate = {
  member: 'validate_doc_update',
  functionsIn: (ddoc) =>
    typeof ddoc['validate_doc_update'] === 'string' ? [{ path: ['validate_doc_update'], prefix: 'Compilation of the validate_doc_update function failed: ' }] : [],
  errorOf: refusalOf,
} satisfies DesignFunctionType;
