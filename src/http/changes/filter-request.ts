import { randomHex } from '../../crypto/crypto.js';
import type { OpenedDatabase } from '../../databases/opened-database.js';
import type { JsonObject } from '../../json/json.js';
import { dbInfoBody } from '../db-info.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/** Credentials never reach design-document JavaScript (CouchDB passes them; Divan is safer: docs/security.md). */
const SECRET_HEADERS = new Set(['authorization', 'cookie', 'x-auth-couchdb-token', 'proxy-authorization']);

function headersOf(request: Request): JsonObject {
  const headers: JsonObject = {};
  const raw = request.raw.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) if (!SECRET_HEADERS.has(raw[i]!.toLowerCase())) headers[raw[i]!] = raw[i + 1]!;
  return headers;
}

function cookiesOf(request: Request): JsonObject {
  const cookies: JsonObject = {};
  for (const part of (request.header('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (name !== 'AuthSession') cookies[name] = part.slice(at + 1).trim();
  }
  return cookies;
}

/**
 * A filter function's `req`, as CouchDB builds it (chttpd_external:json_req_obj): the database
 * info, method, paths, query, headers, body ("undefined" without one), peer, form, cookies,
 * `userCtx` (with `db`) and `secObj`; minus the caller's credentials.
 */
export async function filterRequest(request: Request, services: Services, opened: OpenedDatabase, body: JsonObject): Promise<JsonObject> {
  const info = await opened.info();
  const path = [...request.segments];
  const query: JsonObject = {};
  for (const [key, value] of request.query) query[key] = value;
  return {
    info: info ? dbInfoBody(info, services.databases.compactionRunning(opened.db)) : null,
    id: null,
    uuid: randomHex(),
    method: request.method,
    requested_path: path,
    path,
    raw_path: request.raw.url ?? request.path,
    query,
    headers: headersOf(request),
    body: request.method === 'POST' ? JSON.stringify(body) : 'undefined',
    peer: request.peer,
    form: {},
    cookie: cookiesOf(request),
    userCtx: { db: opened.db, name: request.userCtx.name, roles: request.userCtx.roles },
    secObj: opened.security as unknown as JsonObject,
  };
}
