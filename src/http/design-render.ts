import { refuseUnscoped } from '../databases/document-access.js';
import type { OpenedDatabase } from '../databases/opened-database.js';
import { designDocHolding } from '../design/named-function.js';
import type { RenderedResponse } from '../design/render-response.js';
import type { FailedCall } from '../design/render-functions.js';
import { requestObject } from '../design/request-object.js';
import { isCouchError } from '../errors/couch-error.js';
import type { Json, JsonObject } from '../json/json.js';
import type { DesignDoc } from '../js/sandbox.js';
import type { Config } from '../config/config.js';
import { databaseFacts, requestFacts } from './request-facts.js';
import type { Reply } from './reply.js';
import type { Request } from './request.js';
import type { Services } from './services.js';

/** A show or update request: `/{db}/_design/{d}/{_show|_update}/{name}[/{id…}]`, its design document, document and `req`. */
interface RenderCall {
  readonly opened: OpenedDatabase;
  readonly ddoc: DesignDoc;
  readonly name: string;
  /** The document id of the path (its segments joined by `/`, as CouchDB), null without one. */
  readonly id: string | null;
  /** The document, null when there is no id or no such document (CouchDB passes `null`). */
  readonly doc: JsonObject | null;
}

/** The current revision of `id` (with its conflicts, as CouchDB opens it), null when missing or deleted. */
async function documentOrNull(opened: OpenedDatabase, id: string): Promise<JsonObject | null> {
  try {
    return (await opened.readDocument(id, undefined, { conflicts: true })).doc;
  } catch (error) {
    if (isCouchError(error) && error.status === 404) return null;
    throw error;
  }
}

/** Opens what a show or update function is called with; a missing function is CouchDB's 404 `missing json key`. */
export async function renderCall(request: Request, services: Services, member: string, beforeDocument?: () => void): Promise<RenderCall> {
  const [db, , ddocName, , name, ...idParts] = request.segments;
  const id = idParts.length > 0 ? idParts.join('/') : null;
  const opened = await services.databases.openForDocument(db!, request.userCtx, id ?? undefined);
  // `req.info` holds the database's counts and sequence: not for the users of an access database.
  refuseUnscoped(opened.security, opened.caller);
  const ddoc = await designDocHolding(opened, ddocName!, member, name!);
  beforeDocument?.();
  return { opened, ddoc, name: name!, id, doc: id === null ? null : await documentOrNull(opened, id) };
}

/** CouchDB's `req` for the call, the body read as text for a POST or PUT (so `req.form` has an HTML form's fields). */
export async function renderRequest(request: Request, services: Services, call: RenderCall): Promise<JsonObject> {
  const bodyText = request.method === 'POST' || request.method === 'PUT' ? (await request.body()).toString('utf8') : undefined;
  return requestObject(requestFacts(request, undefined, bodyText), await databaseFacts(services, call.opened), call.id);
}

/** Runs `{member}.{name}` with `(doc, req)` in the sandbox: the function's value, or CouchDB's error thrown. */
export async function runRender(services: Services, call: RenderCall, member: string, req: JsonObject, errorOf: (failure: FailedCall) => Error): Promise<Json> {
  const [outcome] = await services.sandbox.call(call.opened.db, call.ddoc, [member, call.name], [[call.doc, req]]);
  if (!outcome!.ok) throw errorOf(outcome as FailedCall);
  return outcome!.value;
}

/**
 * Headers with `[csp] showlist_header_value` on top of the function's own policy
 * (chttpd_util:maybe_add_csp_header), so a page a show or list function renders runs no script on
 * the server's origin.
 */
export function showlistHeaders(config: Config, own: Record<string, string | string[]>): Record<string, string | string[]> {
  const headers = { ...own };
  const policy = config.getString('csp', 'showlist_header_value').trim();
  if (!config.getBoolean('csp', 'showlist_enable') || policy === '') return headers;
  const name = Object.keys(headers).find((each) => each.toLowerCase() === 'content-security-policy');
  if (name === undefined) headers['Content-Security-Policy'] = policy;
  else headers[name] = [policy, ...([] as string[]).concat(headers[name]!)];
  return headers;
}

/** The HTTP answer of a rendered response; anything but JSON gets the showlist policy (`showlistHeaders`). */
export function renderedReply(config: Config, rendered: RenderedResponse): Reply {
  const headers = 'bytes' in rendered.body ? showlistHeaders(config, rendered.headers) : { ...rendered.headers };
  return { status: rendered.status, headers, body: 'bytes' in rendered.body ? rendered.body.bytes : (rendered.body.json as object) };
}
