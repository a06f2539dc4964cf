/**
 * The CSRF guard on request bodies (CouchDB's `validate_ctype`, applied in one place): a POST or
 * PUT whose body is not `application/json` is refused with 415 before any endpoint runs.
 *
 * A cross-site `<form>` can POST `text/plain`, `application/x-www-form-urlencoded` or
 * `multipart/form-data` with the victim's cookie, but never `application/json` (that needs a CORS
 * preflight), so an endpoint that only takes JSON cannot be driven by another site. CouchDB checks
 * this per endpoint and only for POST; Divan checks every POST and PUT except the exemptions
 * below, so no endpoint can forget it.
 *
 * | request                          | Content-Type                         | answer     |
 * |----------------------------------|--------------------------------------|------------|
 * | POST/PUT, any body               | `application/json` (any parameters)  | goes on    |
 * | POST/PUT, empty body             | none                                 | goes on    |
 * | POST/PUT, a body                 | none                                 | 415        |
 * | POST/PUT                         | anything else (text/plain, a form) | 415 |
 * | an exemption (`BODY_EXEMPTIONS`) | anything                             | endpoint decides |
 * | GET, HEAD, DELETE, COPY, OPTIONS | anything                             | goes on (bodies are not read) |
 */
import { jsonContentTypeRequired } from '../errors/catalog.js';
import { attachmentPathOf } from './document-path.js';
import type { Request } from './request.js';

interface Exemption {
  method: string;
  /** `type`: the request's primary Content-Type, lower case. */
  matches(segments: readonly string[], type: string): boolean;
  why: string;
}

/** Requests whose body is not JSON, or not only JSON; each endpoint checks its own types. */
const BODY_EXEMPTIONS: readonly Exemption[] = [
  {
    method: 'POST',
    matches: (segments) => segments.length === 1 && segments[0] === '_session',
    why: 'login takes application/x-www-form-urlencoded (login forms) and application/json, as CouchDB',
  },
  {
    method: 'PUT',
    matches: (segments) => segments[0] === '_node' && segments[2] === '_config',
    why: "server admins only; CouchDB takes any type here and documents `curl -X PUT … -d '\"value\"'`; a form cannot send PUT",
  },
  {
    method: 'PUT',
    matches: (segments) => attachmentPathOf(segments) !== undefined,
    why: 'a standalone attachment is stored with the Content-Type it is sent with; a form cannot send PUT',
  },
  {
    method: 'PUT',
    matches: (segments, type) => type === 'multipart/related' && segments.length >= 2 && !segments[0]!.startsWith('_'),
    why: "a document with its attachments as CouchDB's replicator sends it; a form cannot send PUT",
  },
  {
    method: 'POST',
    matches: (segments) => segments.length >= 2 && !segments[0]!.startsWith('_') && (segments[1] === '_design' ? segments.length === 3 : segments.length === 2 && !segments[1]!.startsWith('_')),
    why: "a document's attachments uploaded by an HTML form (CouchDB's form POST): the endpoint takes only multipart/form-data, and only with a Referer of this host, as CouchDB's validate_referer, so a form on another site cannot use a visitor's cookie",
  },
  ...['POST', 'PUT'].map((method) => ({
    method,
    matches: (segments: readonly string[]) => segments[1] === '_design' && (segments[3] === '_update' || segments[3] === '_show'),
    why: "update and show functions take any body (`req.body`, an HTML form's `req.form`), as CouchDB; the design document's author decides what a body may do",
  })),
];

const CHECKED_METHODS = new Set(['POST', 'PUT']);

/** Throws 415 `bad_content_type` unless the request's body may go on (see the table above). */
export function checkBodyContentType(request: Request): void {
  if (!CHECKED_METHODS.has(request.method)) return;
  const type = request.contentType().toLowerCase();
  if (BODY_EXEMPTIONS.some((exemption) => exemption.method === request.method && exemption.matches(request.segments, type))) return;
  if (type === 'application/json') return;
  if (type === '' && request.header('content-type') === undefined && !hasBody(request)) return;
  throw jsonContentTypeRequired();
}

/** Whether the request announces a body: a non-zero Content-Length, or any Transfer-Encoding. */
function hasBody(request: Request): boolean {
  if (request.header('transfer-encoding') !== undefined) return true;
  const length = request.header('content-length');
  return length !== undefined && length.trim() !== '0';
}
