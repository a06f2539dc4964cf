/**
 * Map/reduce view endpoints (docs/views.md): `GET`/`POST /{db}/_design/{d}/_view/{v}`,
 * `POST …/_view/{v}/queries`, `/{db}/_temp_view` (410), `POST /{db}/_view_cleanup` and
 * `POST /{db}/_compact/{d}`. Members read views; cleanup and compaction are for database admins.
 */
import { viewPartition } from '../../databases/partitions.js';
import { badRequest, gone, methodNotAllowed, notFound, requestBodyNotObject } from '../../errors/catalog.js';
import { requireDbAdmin } from '../../identity/authorization.js';
import type { Json, JsonObject } from '../../json/json.js';
import { applyParams, defaultArgs, type Param, type ViewArgs } from '../../views/query-args.js';
import { bodyObject } from '../../views/views.js';
import { readBulkJson } from '../bulk-body.js';
import { databaseName } from '../document-path.js';
import { rowsReply } from '../listing-pages.js';
import { checkKeyCount } from '../query.js';
import { json, type Reply } from '../reply.js';
import { parseJsonText, type Request } from '../request.js';
import type { Services } from '../services.js';

const decode = (text: string): Json => parseJsonText(text) as Json;

const queryParams = (request: Request): Param[] => [...request.query.entries()].map(([name, value]) => ({ name, value, decoded: false }));

const bodyParams = (body: JsonObject): Param[] => Object.entries(body).map(([name, value]) => ({ name, value, decoded: true }));

async function openView(request: Request, services: Services) {
  const opened = await services.databases.open(databaseName(request), request.userCtx);
  const group = await services.views.group(opened, request.segments[2]!);
  return { opened, group };
}

/** `GET|POST /{db}/_design/{d}/_view/{v}` and `POST …/_view/{v}/queries`. */
export async function viewQuery(request: Request, services: Services): Promise<Reply> {
  const [, , , , viewName, last, ...rest] = request.segments as string[];
  if (rest.length > 0 || (last !== undefined && last !== 'queries')) throw notFound('missing');
  const multi = last === 'queries';
  if (multi ? request.method !== 'POST' : !['GET', 'HEAD', 'POST'].includes(request.method)) throw methodNotAllowed(multi ? ['POST'] : ['GET', 'HEAD', 'POST']);
  let body: JsonObject | undefined;
  if (request.method === 'POST') {
    const read = (await readBulkJson(request, services.config)) as Json;
    if (!bodyObject(read)) throw requestBodyNotObject();
    body = read;
  }
  const { opened, group } = await openView(request, services);
  const partition = viewPartition(opened, group.doc, request.query.get('partition'));
  const inPartition = (args: ViewArgs): ViewArgs => (partition === undefined ? args : { ...args, partition });
  const queries = body?.['queries'];
  if (!multi && queries !== undefined) throw badRequest('The `queries` parameter is no longer supported at this endpoint');
  if (!multi && body?.['keys'] !== undefined && !Array.isArray(body['keys'])) throw badRequest('`keys` member must be an array.');
  if (multi) {
    if (body?.['keys'] !== undefined) throw badRequest('`keys` and `queries` are mutually exclusive');
    if (!Array.isArray(queries)) throw badRequest('`queries` member must be an array.');
    const argsList = queries.map((query) => {
      if (!bodyObject(query)) throw badRequest('Each query must be a JSON object.');
      return inPartition(applyParams(applyParams(defaultArgs(), queryParams(request), decode), bodyParams(query), decode));
    });
    checkKeyCount(argsList.reduce((sum, args) => sum + (args.keys?.length ?? 0), 0), services.config);
    const results: JsonObject[] = [];
    for (const args of argsList) results.push(await services.views.query(opened, group, viewName!, args, request.signal));
    return json(200, { results });
  }
  // As CouchDB's, a POST body holds any query options (`{}` too), applied before the query string's.
  let args: ViewArgs = defaultArgs();
  if (body !== undefined) args = applyParams(args, bodyParams(body), decode);
  args = inPartition(applyParams(args, queryParams(request), decode));
  checkKeyCount(args.keys?.length ?? 0, services.config);
  return rowsReply(await services.views.query(opened, group, viewName!, args, request.signal));
}

/** `/{db}/_temp_view`: gone since CouchDB 2, answered 410 after the database's membership check, as CouchDB 3. */
export async function tempView(request: Request, services: Services): Promise<Reply> {
  await services.databases.open(databaseName(request), request.userCtx);
  await request.discardBody();
  throw gone('Temporary views are not supported in CouchDB');
}

/** `POST /{db}/_view_cleanup`: drops the indexes no design document uses (202, as CouchDB). */
export async function viewCleanup(request: Request, services: Services): Promise<Reply> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const opened = await services.databases.open(databaseName(request), request.userCtx);
  requireDbAdmin(request.userCtx, opened.security);
  await request.discardBody();
  await services.views.cleanup(opened);
  return json(202, { ok: true });
}

/**
 * `POST /{db}/_compact/{d}`: a view index here has no append-only file to rewrite (storage reclaims
 * deleted rows itself), so compaction has nothing to do; answered 202 as CouchDB does.
 */
export async function viewCompact(request: Request, services: Services): Promise<Reply> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  if (request.segments.length > 3) throw notFound('missing');
  const opened = await services.databases.open(databaseName(request), request.userCtx);
  requireDbAdmin(request.userCtx, opened.security);
  await request.discardBody();
  await services.views.group(opened, request.segments[2]!);
  return json(202, { ok: true });
}
