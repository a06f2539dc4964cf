/**
 * Full-text search endpoints (docs/search.md): `GET|POST /{db}/_design/{d}/_nouveau/{index}` (also
 * below `/{db}/_partition/{p}/`), `GET /{db}/_design/{d}/_nouveau_info/{index}` and `POST
 * /{db}/_nouveau_cleanup` (database admins), and `POST /_nouveau_analyze` (server admins, as every
 * `/_…` path CouchDB does not open to others). Members search;
 * in a database with per-document access, database admins only (the database layer's rule).
 */
import { validatePartition } from '../../databases/partitions.js';
import { requireDbAdmin, requireServerAdmin } from '../../identity/authorization.js';
import { methodNotAllowed, notFound, requestBodyNotObject } from '../../errors/catalog.js';
import type { Json } from '../../json/json.js';
import { searchArgsOf } from '../../search/search-args.js';
import { bodyObject } from '../../views/views.js';
import { readBulkJson } from '../bulk-body.js';
import { databaseName } from '../document-path.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

async function openIndex(request: Request, services: Services) {
  const [, , ddoc, , name, ...rest] = request.segments as string[];
  if (name === undefined || rest.length > 0) throw notFound('missing');
  const opened = await services.databases.open(databaseName(request), request.userCtx);
  const index = await services.search.index(opened, ddoc!, name);
  return { opened, index };
}

/** `GET|POST /{db}/_design/{d}/_nouveau/{index}`: a query in the query string or a JSON body. */
export async function nouveauQuery(request: Request, services: Services): Promise<Reply> {
  if (!['GET', 'HEAD', 'POST'].includes(request.method)) throw methodNotAllowed(['GET', 'POST']);
  let body: { [name: string]: Json } | undefined;
  if (request.method === 'POST') {
    const read = (await readBulkJson(request, services.config)) as Json;
    if (!bodyObject(read)) throw requestBodyNotObject();
    body = read;
  }
  const args = searchArgsOf((name) => {
    if (body !== undefined) return Object.hasOwn(body, name) ? { json: body[name]! } : undefined;
    const text = request.query.get(name);
    return text === null ? undefined : { text };
  });
  const partition = request.query.get('partition') ?? undefined;
  if (partition !== undefined) validatePartition(partition);
  const { opened, index } = await openIndex(request, services);
  return json(200, await services.search.query(opened, index, args, partition));
}

/** `POST /{db}/_nouveau_cleanup`: drops the indexes no design document defines (202, as CouchDB); database admins. */
export async function nouveauCleanup(request: Request, services: Services): Promise<Reply> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const opened = await services.databases.open(databaseName(request), request.userCtx);
  requireDbAdmin(request.userCtx, opened.security);
  await request.discardBody();
  await services.search.cleanup(opened);
  return json(202, { ok: true });
}

/** `GET /{db}/_design/{d}/_nouveau_info/{index}`. */
export async function nouveauInfo(request: Request, services: Services): Promise<Reply> {
  if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed(['GET']);
  const { opened, index } = await openIndex(request, services);
  return json(200, await services.search.info(opened, index));
}

/** `POST /_nouveau_analyze`: `{"analyzer", "text"}` → `{"tokens": […]}`. */
export async function nouveauAnalyze(request: Request, services: Services): Promise<Reply> {
  requireServerAdmin(request.userCtx);
  const body = (await readBulkJson(request, services.config)) as Json;
  if (!bodyObject(body)) throw requestBodyNotObject();
  return json(200, await services.search.analyze(body));
}
