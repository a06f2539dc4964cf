/**
 * `/{db}/_design/{d}/_rewrite/{path}` (chttpd_rewrite:handle_rewrite_req): the design document's
 * `rewrites` (an array of rules, or a function) turns the request into another, which goes through
 * the router again as the same caller (its identity is not looked up anew, so headers a rewrite
 * sets cannot change who it is) and through the same authorization. Paths are relative to the
 * design document (`../../x` is `/{db}/x`). Bounded by `[chttpd] rewrite_limit` rewrites per request.
 */
import type { IncomingMessage } from 'node:http';
import type { Config } from '../../config/config.js';
import { applyRules, normalizePath, quotePlus } from '../../design/rewrite-rules.js';
import { rewriteErrorOf, rewriteOf, type Rewrite } from '../../design/rewrite-function.js';
import { requestObject } from '../../design/request-object.js';
import { badRequest, notFound } from '../../errors/catalog.js';
import { CouchError } from '../../errors/couch-error.js';
import type { Json } from '../../json/json.js';
import type { DesignDoc } from '../../js/sandbox.js';
import type { OpenedDatabase } from '../../databases/opened-database.js';
import type { FailedCall } from '../../design/render-functions.js';
import type { Reply } from '../reply.js';
import type { Request } from '../request.js';
import { databaseFacts, requestFacts } from '../request-facts.js';
import type { Services } from '../services.js';
import { parseTarget } from '../target.js';

/** Sends a request through the router (and the body check) as the pipeline does. */
type Dispatch = (request: Request) => Reply | Promise<Reply>;

/** A `[chttpd]` setting, read from `[httpd]` when `[chttpd]` does not set it (chttpd_util:get_chttpd_config). */
/** `[chttpd] key`, else `[httpd] key` (CouchDB reads both); an empty value (the built-in default) counts as unset. */
const chttpdSetting = (config: Config, key: string): string | undefined => {
  const set = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value);
  return set(config.get('chttpd', key)) ?? set(config.get('httpd', key));
};

const invalidPath = (): CouchError => new CouchError(404, 'rewrite_error', 'Invalid path.');

/** The path of `relative` below the design document, `..` and `.` resolved. */
function targetOf(request: Request, relative: string): string {
  const [db, , ddocName] = request.segments;
  return normalizePath(`/${encodeURIComponent(db!)}/_design/${encodeURIComponent(ddocName!)}/${relative}`);
}

function retarget(request: Request, dispatch: Dispatch, services: Services, target: string, change: { method?: string; headers?: IncomingMessage['headers']; body?: Buffer } = {}): Reply | Promise<Reply> {
  const parsed = parseTarget(target, services.config.getBoolean('chttpd', 'decode_plus_to_space'));
  if (parsed === undefined) throw badRequest('invalid URL encoding');
  return dispatch(request.rewritten({ method: change.method ?? request.method, segments: parsed.segments, query: parsed.search, path: parsed.path, ...change }));
}

/** The rules form: the first matching rule's path, or 404 `not_found` `missing` (as CouchDB). */
function byRules(request: Request, services: Services, dispatch: Dispatch, rules: Json[]): Reply | Promise<Reply> {
  const secure = (chttpdSetting(services.config, 'secure_rewrites') ?? 'true').trim().toLowerCase() !== 'false';
  const relative = applyRules(rules, request.method, request.segments.slice(4), request.query, secure);
  if (relative === undefined) throw notFound('missing');
  const target = targetOf(request, relative);
  // A `..` or `*` binding of the request's own path must not leave the database either.
  const database = `/${encodeURIComponent(request.segments[0]!)}`;
  if (secure && target !== database && !target.startsWith(`${database}/`)) throw new CouchError(500, 'insecure_rewrite_rule', 'too many ../.. segments');
  return retarget(request, dispatch, services, target);
}

/** The function form: CouchDB's `req` without `info`, `form`, `uuid` and `id`, the body as read. */
async function byFunction(request: Request, services: Services, opened: OpenedDatabase, ddoc: DesignDoc): Promise<{ rewrite: Rewrite; body?: Buffer }> {
  const body = request.method === 'POST' || request.method === 'PUT' ? await request.body() : undefined;
  const { info: _info, form: _form, uuid: _uuid, id: _id, ...req } = requestObject(requestFacts(request, undefined, body?.toString('utf8')), await databaseFacts(services, opened), null);
  const [outcome] = await services.sandbox.call(opened.db, ddoc, ['rewrites'], [[req]]);
  if (!outcome!.ok) throw rewriteErrorOf(outcome as FailedCall);
  return { rewrite: rewriteOf(outcome!.value), ...(body === undefined ? {} : { body }) };
}

const lowerCased = (headers: Record<string, string>): IncomingMessage['headers'] => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

export async function rewrite(request: Request, services: Services, dispatch: Dispatch): Promise<Reply> {
  const limit = Number.parseInt(chttpdSetting(services.config, 'rewrite_limit') ?? '100', 10);
  if (request.rewrites >= (Number.isNaN(limit) ? 100 : limit)) throw badRequest('Exceeded rewrite recursion limit');
  const opened = await services.databases.open(request.segments[0]!, request.userCtx);
  const { doc } = await opened.readDocument(`_design/${request.segments[2]}`, undefined, {});
  const rules = doc['rewrites'];
  if (Array.isArray(rules)) return byRules(request, services, dispatch, rules);
  if (typeof rules !== 'string') throw invalidPath();
  const { rewrite: result, body } = await byFunction(request, services, opened, doc as DesignDoc);
  if (result.kind === 'none') throw invalidPath();
  const newBody = result.body === undefined ? body : Buffer.from(result.body, 'utf8');
  if (result.kind === 'answer') return { status: result.code, headers: result.headers, body: newBody ?? Buffer.alloc(0) };
  const query = result.query === undefined ? request.query.toString() : Object.entries(result.query).map(([name, value]) => `${quotePlus(name)}=${quotePlus(value)}`).join('&');
  const target = targetOf(request, result.path) + (query === '' ? '' : `?${query}`);
  const headers = result.headers === undefined ? undefined : { ...request.headers, ...lowerCased(result.headers) };
  return retarget(request, dispatch, services, target, { ...(result.method ? { method: result.method } : {}), ...(headers ? { headers } : {}), ...(newBody ? { body: newBody } : {}) });
}
