/**
 * `/{db}/_shards`, `/{db}/_shards/{docid}` and `/{db}/_sync_shards` (CouchDB's mem3_httpd), answered
 * as for a database of one shard (`cluster.q` is 1 in `GET /{db}`): the whole key range
 * `00000000-ffffffff`, held by every node (on PostgreSQL all nodes share the data). Syncing shards
 * has nothing to copy; it is accepted (202) as CouchDB accepts it. `_shards` is for members,
 * `_sync_shards` for server admins, as chttpd_auth_request.
 */
import { methodNotAllowed, notFound } from '../../errors/catalog.js';
import { requireServerAdmin } from '../../identity/authorization.js';
import { clusterNodeNames } from '../cluster-nodes.js';
import { databaseName } from '../document-path.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

const WHOLE_RANGE = '00000000-ffffffff';

/** `GET /{db}/_shards[/{docid}]`. */
export async function shards(request: Request, services: Services): Promise<Reply> {
  if (request.segments.length > 3) throw notFound();
  if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed(['GET']);
  await services.databases.open(databaseName(request), request.userCtx);
  const nodes = await clusterNodeNames(services);
  if (request.segments.length === 3) return json(200, { range: WHOLE_RANGE, nodes });
  return json(200, { shards: { [WHOLE_RANGE]: nodes } });
}

/** `POST /{db}/_sync_shards`. */
export async function syncShards(request: Request, services: Services): Promise<Reply> {
  requireServerAdmin(request.userCtx);
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  await services.databases.open(databaseName(request), request.userCtx);
  await request.discardBody();
  return json(202, { ok: true });
}
