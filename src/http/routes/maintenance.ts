/**
 * Maintenance endpoints of a database and of the server: `_revs_limit`, `_purged_infos_limit`,
 * `_purge` and `/_dbs_info` (compaction is in databases.ts).
 */
import type { DatabaseLimit } from '../../databases/types.js';
import { parseRev } from '../../documents/document-json.js';
import { badRequest, methodNotAllowed, requestBodyNotObject } from '../../errors/catalog.js';
import { isCouchError } from '../../errors/couch-error.js';
import { requireServerAdmin } from '../../identity/authorization.js';
import type { JsonObject } from '../../json/json.js';
import { readBulkJson } from '../bulk-body.js';
import { databaseInfoBody } from '../database-info.js';
import { propsOf } from '../../databases/partitions.js';
import { databaseName } from '../document-path.js';
import { selectRange } from '../key-range.js';
import { booleanParam, jsonParam, nonNegativeIntegerParam } from '../query.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

function limitEndpoint(limit: DatabaseLimit, invalid: string) {
  return async (request: Request, services: Services): Promise<Reply> => {
    const db = databaseName(request);
    switch (request.method) {
      case 'GET':
      case 'HEAD':
        return json(200, await services.databases.databaseLimit(db, request.userCtx, limit));
      case 'PUT': {
        const value = await request.json();
        if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw badRequest(invalid);
        await services.databases.setDatabaseLimit(db, request.userCtx, limit, value);
        return json(200, { ok: true });
      }
      default:
        throw methodNotAllowed(['GET', 'PUT']);
    }
  };
}

/** `GET/PUT /{db}/_revs_limit`: revisions kept above every leaf, enforced when a document is written. */
export const revsLimit = limitEndpoint('revs_limit', '`revs_limit` must be a positive integer');

/** `GET/PUT /{db}/_purged_infos_limit`: purge requests remembered. */
export const purgedInfosLimit = limitEndpoint('purged_infos_limit', '`purged_infos_limit` must be positive integer');

/** The `{"docid": ["rev", …]}` body of `_purge`, within `[purge]` limits. */
function purgeRequests(body: unknown, services: Services): { id: string; revs: string[] }[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw requestBodyNotObject();
  const entries = Object.entries(body as JsonObject);
  if (entries.length > services.config.getInteger('purge', 'max_document_id_number')) throw badRequest('Exceeded maximum number of documents.');
  const requests = entries.map(([id, revs]) => {
    if (!Array.isArray(revs)) throw badRequest('Revisions to purge must be a JSON list of revisions.');
    return { id, revs: revs.map((rev) => parseRev(rev)) };
  });
  const total = requests.reduce((sum, request) => sum + request.revs.length, 0);
  if (total > services.config.getInteger('purge', 'max_revisions_number')) throw badRequest('Exceeded maximum number of revisions.');
  return requests;
}

/**
 * `POST /{db}/_purge` (server admins): removes leaf revisions for good; 201 with
 * `{"purge_seq":null,"purged":{"docid":["rev",…]}}`, as CouchDB.
 */
export async function purge(request: Request, services: Services): Promise<Reply> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const db = databaseName(request);
  requireServerAdmin(request.userCtx);
  const requests = purgeRequests(await readBulkJson(request, services.config), services);
  const purged = await services.databases.purge(db, request.userCtx, requests);
  return json(201, { purge_seq: null, purged: Object.fromEntries(requests.map((entry, index) => [entry.id, purged[index]!])) });
}

/** `GET /{db}/_purged_infos`: `{"purged_infos":[{"id","revs"}…]}`, oldest first, as CouchDB. */
export async function purgedInfos(request: Request, services: Services): Promise<Reply> {
  const infos = await services.databases.purgedInfos(databaseName(request), request.userCtx);
  return json(200, { purged_infos: infos.map(({ id, revs }) => ({ id, revs: [...revs] })) });
}

/** One `{key, info}` (or `{key, error}`) of `/_dbs_info`: the caller must be able to open the database. */
async function databaseEntry(db: unknown, request: Request, services: Services): Promise<JsonObject> {
  if (typeof db !== 'string') return { key: db as null, error: 'not_found' };
  try {
    const opened = await services.databases.open(db, request.userCtx);
    const info = await opened.info({ sizes: true });
    if (info) return { key: db, info: databaseInfoBody(info, services.databases.compactionRunning(db), propsOf(opened.security)) };
  } catch (error) {
    if (!isCouchError(error)) throw error;
    if (error.status !== 404) return { key: db, error: error.error };
  }
  return { key: db, error: 'not_found' };
}

/**
 * `GET /_dbs_info` (the `_all_dbs` options) and `POST /_dbs_info` with `keys`: the info of each
 * database, for the callers who may list databases (`[chttpd] admin_only_all_dbs`) and only of the
 * databases they may open.
 */
export async function dbsInfo(request: Request, services: Services): Promise<Reply> {
  if (services.config.getBoolean('chttpd', 'admin_only_all_dbs')) requireServerAdmin(request.userCtx);
  let names: unknown[];
  if (request.method === 'POST') {
    const body = await readBulkJson(request, services.config);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw requestBodyNotObject();
    const keys = (body as JsonObject)['keys'];
    if (keys === undefined) throw badRequest('`keys` member must exist.');
    if (!Array.isArray(keys)) throw badRequest('`keys` member must be an array.');
    if (keys.length > services.config.getInteger('chttpd', 'max_db_number_for_dbs_info_req')) throw badRequest('too_many_keys');
    names = keys;
  } else {
    const query = request.query;
    names = selectRange(await services.databases.list(), {
      startKey: jsonParam(query, 'startkey', 'start_key'),
      endKey: jsonParam(query, 'endkey', 'end_key'),
      descending: booleanParam(query, 'descending'),
      inclusiveEnd: booleanParam(query, 'inclusive_end', true),
      limit: nonNegativeIntegerParam(query, 'limit'),
      skip: nonNegativeIntegerParam(query, 'skip'),
    });
  }
  const entries: JsonObject[] = [];
  for (const name of names) entries.push(await databaseEntry(name, request, services));
  return json(200, entries);
}
