/**
 * Mango: `POST /{db}/_find`, `POST /{db}/_explain`, and `_index` (`GET`/`POST /{db}/_index`,
 * `POST /{db}/_index/_bulk_delete`, `DELETE /{db}/_index/{ddoc}/json/{name}`). Reads are for
 * members, as `_all_docs`; creating and deleting an index writes a design document, so it is for
 * database admins. The work is in src/mango/.
 */
import { badRequest, requestBodyNotObject, methodNotAllowed, notFound } from '../../errors/catalog.js';
import { invalidListParams } from '../../errors/mango-errors.js';
import { isObject } from '../../documents/document-json.js';
import type { JsonObject } from '../../json/json.js';
import { explain as explainFind, find as runFind } from '../../mango/find.js';
import { parseFindRequest } from '../../mango/find-request.js';
import { bulkDeleteIndexes, createIndex, deleteIndex, indexListing } from '../../mango/index-admin.js';
import { readBulkJson } from '../bulk-body.js';
import { databaseName, openListing } from '../document-path.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

async function objectBody(request: Request, services: Services): Promise<JsonObject> {
  const body = await readBulkJson(request, services.config);
  if (!isObject(body)) throw requestBodyNotObject();
  return body;
}

function requireMethod(request: Request, method: string): void {
  if (request.method !== method) throw methodNotAllowed([method]);
}

/** `POST /{db}/_find`. */
export async function find(request: Request, services: Services): Promise<Reply> {
  requireMethod(request, 'POST');
  // In a database with per-document access a user queries their own documents (mango/find.ts).
  const opened = await openListing(request, services, true);
  return json(200, await runFind(opened, parseFindRequest(withPartition(request, await objectBody(request, services))), services.search, request.signal));
}

/** `POST /{db}/_explain`. */
export async function explain(request: Request, services: Services): Promise<Reply> {
  requireMethod(request, 'POST');
  const opened = await openListing(request, services, true);
  return json(200, await explainFind(opened, parseFindRequest(withPartition(request, await objectBody(request, services)))));
}

/** mango_httpd's maybe_set_partition: the query's `partition` (from `/_partition/{p}/`) goes into the body. */
function withPartition(request: Request, body: JsonObject): JsonObject {
  const partition = request.query.get('partition');
  if (partition === null || body['partition'] === partition) return body;
  if (body['partition'] !== undefined) throw badRequest('Conflicting value for `partition` in query string');
  return { ...body, partition };
}

function integerParam(request: Request, name: string): number | undefined {
  const value = request.query.get(name);
  if (value === null) return undefined;
  if (!/^-?\d+$/.test(value)) throw invalidListParams();
  return Number(value);
}

/** `/{db}/_index` and below. */
export async function mangoIndex(request: Request, services: Services): Promise<Reply> {
  const rest = request.segments.slice(2);
  if (rest.length === 0) {
    if (request.method !== 'GET' && request.method !== 'POST') throw methodNotAllowed(['GET', 'POST']);
    const opened = await openListing(request, services);
    if (request.method === 'GET') return json(200, await indexListing(opened, integerParam(request, 'limit'), integerParam(request, 'skip') ?? 0));
    return json(200, await createIndex(opened, await objectBody(request, services)));
  }
  if (rest.length === 1 && rest[0] === '_bulk_delete') {
    requireMethod(request, 'POST');
    const opened = await services.databases.open(databaseName(request), request.userCtx);
    return json(200, await bulkDeleteIndexes(opened, await objectBody(request, services)));
  }
  const path = rest[0] === '_design' ? [`_design/${rest[1]}`, ...rest.slice(2)] : rest;
  if (path.length !== 3) throw notFound('missing');
  requireMethod(request, 'DELETE');
  const opened = await services.databases.open(databaseName(request), request.userCtx);
  return json(200, await deleteIndex(opened, path[0]!, path[1]!, path[2]!));
}
