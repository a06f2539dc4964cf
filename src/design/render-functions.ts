import { notFound } from '../errors/catalog.js';
import type { CouchError } from '../errors/couch-error.js';
import type { Json, JsonObject } from '../json/json.js';
import { isObject, type FailedCall } from './function-types/function-type.js';
import { shows } from './function-types/shows.js';
import { updates } from './function-types/updates.js';
import { undefinedResponse } from './function-types/render-error.js';
export { namedError } from './function-types/render-error.js';

export type { FailedCall };
export const SHOWS = shows.member;
export const UPDATES = updates.member;
export const updateErrorOf: (failure: FailedCall) => CouchError = updates.errorOf;

/** A show function that failed; with an id in the path and no such document, CouchDB's render.js answers 404 `document not found`. */
export const showErrorOf = (doc: JsonObject | null, id: string | null) => (failure: FailedCall): CouchError =>
  failure.kind === 'thrown' && doc === null && id !== null ? notFound('document not found') : shows.errorOf(failure);

/** render.js runShow: `fun(doc, req) || {}`, a string is `{body}`; anything else but an object is not a response. */
export function showResponse(value: Json): JsonObject {
  const response = value === null || value === false || value === 0 || value === '' ? {} : value;
  if (typeof response === 'string') return { body: response };
  if (!isObject(response)) throw undefinedResponse('show');
  return response;
}

/** render.js runUpdate: `[doc, response]`, the response an object or a string (`{body}`); doc is written only when an object. */
export function updateParts(value: Json): { doc: JsonObject | null; response: JsonObject } {
  const [doc, response] = Array.isArray(value) ? value : [];
  if (typeof response !== 'string' && !isObject(response)) throw undefinedResponse('update');
  return { doc: isObject(doc) ? doc : null, response: typeof response === 'string' ? { body: response } : response };
}

/** The response of an update that wrote its document names the revision and id (chttpd_show:send_doc_update_response). */
export function withWriteHeaders(response: JsonObject, written: { id: string; rev: string }): JsonObject {
  const headers = { ...(isObject(response['headers']) ? response['headers'] : {}), 'X-Couch-Update-NewRev': written.rev, 'X-Couch-Id': encodeURIComponent(written.id) };
  return { ...response, headers };
}
