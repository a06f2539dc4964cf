import { randomHex } from '../crypto/crypto.js';
import type { UserCtx } from '../identity/user-ctx.js';
import type { JsonObject } from '../json/json.js';

/** Credentials never reach design-document JavaScript (CouchDB passes them; Divan is safer: docs/security.md). */
const SECRET_HEADERS = new Set(['authorization', 'cookie', 'x-auth-couchdb-token', 'proxy-authorization']);

/** What the HTTP layer knows of a request, as plain values: all `req` is built from. */
export interface RequestFacts {
  readonly method: string;
  /** Decoded path segments. */
  readonly segments: readonly string[];
  /** The path and query as the client sent them. */
  readonly rawPath: string;
  readonly query: URLSearchParams;
  /** Header names and values in the order received (Node's `rawHeaders`). */
  readonly rawHeaders: readonly string[];
  /** The `Cookie` header, or undefined. */
  readonly cookie: string | undefined;
  readonly peer: string;
  readonly userCtx: UserCtx;
  /** The parsed JSON body of a POST. */
  readonly body?: JsonObject;
  /** The body as sent (shows, updates), and its media type, for `req.form`. */
  readonly bodyText?: string;
  readonly contentType?: string;
}

/** The database a design function runs for. */
export interface DatabaseFacts {
  readonly name: string;
  /** `GET /{db}` as CouchDB answers it; null when it could not be read. */
  readonly info: JsonObject | null;
  readonly secObj: JsonObject;
}

/** A header name as Erlang's HTTP parser hands it to CouchDB: each hyphenated word capitalised (`x-foo-bar` → `X-Foo-Bar`). */
function canonicalHeaderName(name: string): string {
  return name
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
    .join('-');
}

function headersOf(rawHeaders: readonly string[]): JsonObject {
  const headers: JsonObject = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (!SECRET_HEADERS.has(rawHeaders[i]!.toLowerCase())) headers[canonicalHeaderName(rawHeaders[i]!)] = rawHeaders[i + 1]!;
  return headers;
}

function cookiesOf(header: string | undefined): JsonObject {
  const cookies: JsonObject = {};
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (name !== 'AuthSession') cookies[name] = part.slice(at + 1).trim();
  }
  return cookies;
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** A POST or PUT of an HTML form, its fields (chttpd_external's `form`); `{}` for any other body. */
function formOf(request: RequestFacts): JsonObject {
  const form: JsonObject = {};
  if ((request.method !== 'POST' && request.method !== 'PUT') || !request.contentType?.toLowerCase().startsWith(FORM_TYPE)) return form;
  for (const [key, value] of new URLSearchParams(request.bodyText ?? '')) form[key] = value;
  return form;
}

function bodyOf(request: RequestFacts): string {
  if (request.bodyText !== undefined) return request.bodyText;
  return request.method === 'POST' ? JSON.stringify(request.body ?? {}) : 'undefined';
}

/**
 * CouchDB's `req` object, the request a filter, show, list or update function is called with
 * (chttpd_external:json_req_obj): the database info, id, method, paths, query, headers, body
 * ("undefined" without one), peer, form, cookies, `userCtx` (with `db`) and `secObj`; minus the
 * caller's credentials.
 */
export function requestObject(request: RequestFacts, db: DatabaseFacts, id: string | null = null): JsonObject {
  const path = [...request.segments];
  const query: JsonObject = {};
  for (const [key, value] of request.query) query[key] = value;
  return {
    info: db.info,
    id,
    uuid: randomHex(),
    method: request.method,
    requested_path: path,
    path,
    raw_path: request.rawPath,
    query,
    headers: headersOf(request.rawHeaders),
    body: bodyOf(request),
    peer: request.peer,
    form: formOf(request),
    cookie: cookiesOf(request.cookie),
    userCtx: { db: db.name, name: request.userCtx.name, roles: request.userCtx.roles },
    secObj: db.secObj,
  };
}
