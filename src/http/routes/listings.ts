import { badRequest, methodNotAllowed, requestBodyNotObject } from '../../errors/catalog.js';
import type { Json, JsonObject } from '../../json/json.js';
import { isObject } from '../../documents/document-json.js';
import { asQuery, listDocuments, orderedKeys, paging } from '../all-docs-rows.js';
import { readBulkJson } from '../bulk-body.js';
import { openListing } from '../document-path.js';
import { selectRange } from '../key-range.js';
import { booleanParam, checkKeyCount, jsonParam } from '../query.js';
import { json, type Reply } from '../reply.js';
import { listingReply, wholeListing } from '../listing-pages.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/**
 * `keys` and the options of a listing: the query string's, and a POST body's members, applied
 * before the query string's as CouchDB's `parse_body_and_query` does (so `limit` and `skip` in a
 * body page its `keys`).
 */
async function askedListing(request: Request, services: Services): Promise<{ keys: Json | undefined; query: URLSearchParams }> {
  const keys = jsonParam(request.query, 'keys');
  if (keys !== undefined && !Array.isArray(keys)) throw badRequest('`keys` parameter must be an array.');
  if (request.method !== 'POST') return { keys, query: request.query };
  const body = await readBulkJson(request, services.config);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw requestBodyNotObject();
  // `get` reads a name's first value: the query string's, where both give one.
  const query = new URLSearchParams([...request.query, ...asQuery(body as JsonObject)]);
  if (!('keys' in body)) return { keys, query };
  const bodyKeys = (body as JsonObject)['keys'];
  if (!Array.isArray(bodyKeys)) throw badRequest('`keys` body member must be an array.');
  return { keys: bodyKeys, query };
}

/** `GET/POST /{db}/_all_docs` (POST may carry `keys`). */
export async function allDocs(request: Request, services: Services): Promise<Reply> {
  const opened = await openListing(request, services, true);
  const { keys, query } = await askedListing(request, services);
  return listingReply(await listDocuments(opened, query, keys));
}

/** `GET/POST /{db}/_design_docs`: `_all_docs` of the design documents only, with the same options. */
export async function designDocs(request: Request, services: Services): Promise<Reply> {
  const opened = await openListing(request, services, true);
  const { keys, query } = await askedListing(request, services);
  return listingReply(await listDocuments(opened, query, keys, true));
}

/**
 * `POST /{db}/_all_docs/queries`: several `_all_docs` queries in one request, each an object of
 * the query parameters as JSON values; answered in order as `{"results":[…]}`.
 */
export async function allDocsQueries(request: Request, services: Services): Promise<Reply> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const opened = await openListing(request, services, true);
  const body = await readBulkJson(request, services.config);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw requestBodyNotObject();
  const queries = (body as JsonObject)['queries'];
  if (!Array.isArray(queries)) throw badRequest('`queries` member must be an array.');
  checkKeyCount(queries.reduce<number>((sum, entry) => sum + (isObject(entry) && Array.isArray(entry['keys']) ? entry['keys'].length : 0), 0), services.config);
  const results: JsonObject[] = [];
  for (const entry of queries) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw badRequest('Each query must be a JSON object.');
    const query = new URLSearchParams(asQuery(entry as JsonObject));
    // `/{db}/_partition/{p}/_all_docs/queries`: every query reads the partition.
    const partition = request.query.get('partition');
    if (partition !== null) query.set('partition', partition);
    results.push(await wholeListing(await listDocuments(opened, query, (entry as JsonObject)['keys'])));
  }
  return json(200, { results });
}

/**
 * `GET/POST /{db}/_local_docs`: the `_local/` documents with `_all_docs`'s options; as CouchDB,
 * `total_rows` and `offset` are null.
 */
export async function localDocs(request: Request, services: Services): Promise<Reply> {
  // In a database with per-document access a user lists their own (`OpenedDatabase.listLocal`).
  const opened = await openListing(request, services, true);
  const { keys, query } = await askedListing(request, services);
  const includeDocs = booleanParam(query, 'include_docs');
  const locals = new Map((await opened.listLocal()).map((local) => [local.id, local]));
  const localRow = (id: string): JsonObject => {
    const local = locals.get(id)!;
    const row: JsonObject = { id, key: id, value: { rev: local.rev } };
    if (includeDocs) row['doc'] = { _id: id, _rev: local.rev, ...local.body };
    return row;
  };
  const { descending, limit, skip } = paging(query);
  if (keys !== undefined) {
    const rows = orderedKeys(keys, descending, services.config).map((item) => (typeof item === 'string' && locals.has(item) ? localRow(item) : { key: item, error: 'not_found' }));
    return json(200, { total_rows: null, offset: null, rows: rows.slice(skip, limit === undefined ? undefined : skip + limit) });
  }
  const key = jsonParam(query, 'key');
  const ids = selectRange([...locals.keys()], {
    startKey: key ?? jsonParam(query, 'startkey', 'start_key'),
    endKey: key ?? jsonParam(query, 'endkey', 'end_key'),
    descending,
    inclusiveEnd: booleanParam(query, 'inclusive_end', true),
    limit,
    skip,
  });
  return json(200, { total_rows: null, offset: null, rows: ids.map(localRow) });
}
