// What was typed on a show or an update function's page → the request, and the answer's bytes →
// what the page may show of them. Pure: tested in Node. The answer is the function's output,
// untrusted: it is only ever shown as text or in a sandboxed frame (design-function.js).
import { dbPath } from './api.js';
import { parseJson } from './format.js';

/** The kinds of design-document function the console runs, by their member of the document. */
const FUNCTION_KINDS = /** @type {const} */ ({ show: 'shows', update: 'updates' });

/** The request bodies an update function can be sent, by their content type. */
export const BODY_TYPES = /** @type {const} */ ({ form: 'application/x-www-form-urlencoded', json: 'application/json' });

/**
 * The function's path: `/{db}/_design/{ddoc}/_show/{name}[/{id}]` (or `_update`), each segment
 * encoded; a design document's id keeps its `_design/` unencoded, as CouchDB routes it.
 *
 * @param {string} db
 * @param {string} ddoc the design document's name without `_design/`
 * @param {'show' | 'update'} kind
 * @param {string} name
 * @param {string} [id] the document the function gets; none when empty
 */
export function functionPath(db, ddoc, kind, name, id) {
  const base = `${dbPath(db, `_design/${ddoc}`)}/_${kind}/${encodeURIComponent(name)}`;
  if (id === undefined || id === '') return base;
  return `${base}${dbPath('', id).slice(1)}`;
}

/**
 * @typedef {{ ok: true, method: string, path: string, body?: { contentType: string, text: string } }
 *   | { ok: false, field: string, error: string }} CallRequest
 */

/**
 * A show: `GET`, with or without a document id.
 *
 * @param {{ db: string, ddoc: string, name: string }} target
 * @param {string} id as typed
 * @returns {CallRequest}
 */
export function showRequest(target, id) {
  return { ok: true, method: 'GET', path: functionPath(target.db, target.ddoc, 'show', target.name, id.trim()) };
}

/**
 * An update: `POST` without a document id (the function gets null), `PUT` with one, as CouchDB
 * routes them. The body is sent as typed, as a form or as JSON (which must then parse); an empty
 * body is no body.
 *
 * @param {{ db: string, ddoc: string, name: string }} target
 * @param {{ id: string, type: string, body: string }} input
 * @returns {CallRequest}
 */
export function updateRequest(target, input) {
  const id = input.id.trim();
  const method = id === '' ? 'POST' : 'PUT';
  const path = functionPath(target.db, target.ddoc, 'update', target.name, id);
  if (input.body.trim() === '') return { ok: true, method, path };
  const contentType = input.type === 'json' ? BODY_TYPES.json : input.type === 'form' ? BODY_TYPES.form : undefined;
  if (contentType === undefined) return { ok: false, field: 'body type', error: `Unknown body type ${input.type}: choose form or JSON.` };
  if (input.type === 'json') {
    const parsed = parseJson(input.body);
    if (!parsed.ok) return { ok: false, field: 'body', error: `The body is not valid JSON: ${parsed.error}` };
  }
  return { ok: true, method, path, body: { contentType, text: input.body } };
}

const TEXT_TYPES = /^(text\/[^;]*|application\/(json|[^;]*\+json|xml|[^;]*\+xml|javascript|ecmascript|x-www-form-urlencoded))\s*(;|$)/i;

/**
 * The body of an answer as the page may show it: the text of a textual content type (UTF-8, or
 * the charset named), else its size only. Bytes that do not decode are counted, not shown.
 *
 * @param {string | undefined} contentType
 * @param {Uint8Array} bytes
 * @returns {{ text: string } | { binary: string }}
 */
export function answerBody(contentType, bytes) {
  const type = contentType ?? '';
  const size = `${bytes.length} ${bytes.length === 1 ? 'byte' : 'bytes'}`;
  if (bytes.length > 0 && type !== '' && !TEXT_TYPES.test(type)) return { binary: `${size} of ${type}, not shown as text.` };
  const charset = /;\s*charset="?([^";\s]+)/i.exec(type)?.[1] ?? 'utf-8';
  try {
    return { text: new TextDecoder(charset, { fatal: true }).decode(bytes) };
  } catch {
    return { binary: `${size} that are not ${charset} text, not shown.` };
  }
}

/**
 * What the page says of an answer: the request and the status, with CouchDB's `error` and
 * `reason` when the function (or the server) answered with one. A function's 403 is its own
 * refusal, not the console's "you are not allowed", so it is said as the server said it.
 *
 * @param {{ method: string, path: string }} request
 * @param {number} status
 * @param {unknown} json the answer's JSON, if it was JSON
 */
export function answerSummary(request, status, json) {
  const said = `${request.method} ${request.path} answered ${status}`;
  if (json === null || typeof json !== 'object') return `${said}.`;
  const { error, reason } = /** @type {Record<string, unknown>} */ (json);
  if (typeof error !== 'string' || status < 400) return `${said}.`;
  return `${said} ${error}${typeof reason === 'string' && reason !== '' ? `: ${reason}` : ''}.`;
}

/**
 * Whether a content type is a document a browser would render: the page then also shows it in a
 * sandboxed frame, where none of its scripts can run.
 *
 * @param {string | undefined} contentType
 */
export function isHtml(contentType) {
  return /^\s*(text\/html|application\/xhtml\+xml)\s*(;|$)/i.test(contentType ?? '');
}

/**
 * The functions of one kind in a design document, sorted by name.
 *
 * @param {Record<string, unknown>} ddoc
 * @param {'show' | 'update'} kind
 * @returns {string[]}
 */
export function functionNames(ddoc, kind) {
  const member = ddoc[FUNCTION_KINDS[kind]];
  if (member === null || typeof member !== 'object' || Array.isArray(member)) return [];
  return Object.keys(member).filter((name) => typeof (/** @type {Record<string, unknown>} */ (member))[name] === 'string').sort();
}
