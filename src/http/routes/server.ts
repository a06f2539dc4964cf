import { requireServerAdmin } from '../../identity/authorization.js';
import { uuids as uuidGenerator } from '../../crypto/uuids.js';
import { badRequest } from '../../errors/catalog.js';
import { nodeTasks } from '../../tasks/gathered-tasks.js';
import { json, type Reply } from '../reply.js';
import { clusterNodeNames } from '../cluster-nodes.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';
import { jsonParam, nonNegativeIntegerParam, booleanParam } from '../query.js';
import { selectRange } from '../key-range.js';

/** The CouchDB API version Divan implements, reported as `version` in `GET /`. */
const COUCHDB_API_VERSION = '3.5.2';

export function welcome(_request: Request, services: Services): Reply {
  const vendor: Record<string, string> = { name: 'Divan', version: services.version, ...services.config.section('vendor') };
  return json(200, {
    couchdb: 'Welcome',
    version: COUCHDB_API_VERSION,
    uuid: services.config.get('couchdb', 'uuid') ?? '',
    features: ['access-ready', 'partitioned', 'nouveau'],
    vendor,
  });
}

export async function up(_request: Request, services: Services): Promise<Reply> {
  try {
    await services.databases.ping();
  } catch {
    return json(503, { status: 'error', reason: 'Storage is unreachable.' });
  }
  return json(200, { status: 'ok', seeds: {} });
}

export async function uuids(request: Request, services: Services): Promise<Reply> {
  const asked = request.query.get('count') ?? '1';
  // list_to_integer in CouchDB: an optional sign and digits, nothing else.
  if (!/^[+-]?\d+$/.test(asked) || Number(asked) < 0) throw badRequest('count must be a positive integer');
  const count = Number(asked);
  const max = services.config.getInteger('uuids', 'max_count');
  if (count > max) throw badRequest('count parameter too large');
  const list = Array.from({ length: count }, () => uuidGenerator.next());
  // CouchDB's cache-busting headers: an id from a cache would be handed out twice.
  return json(200, { uuids: list }, { 'Cache-Control': 'no-cache', Expires: 'Mon, 01 Jan 1990 00:00:00 GMT', Pragma: 'no-cache' });
}

export async function allDbs(request: Request, services: Services): Promise<Reply> {
  if (services.config.getBoolean('chttpd', 'admin_only_all_dbs')) requireServerAdmin(request.userCtx);
  const names = await services.databases.list();
  return json(
    200,
    selectRange(names, {
      startKey: jsonParam(request.query, 'startkey', 'start_key'),
      endKey: jsonParam(request.query, 'endkey', 'end_key'),
      descending: booleanParam(request.query, 'descending'),
      inclusiveEnd: booleanParam(request.query, 'inclusive_end', true),
      limit: nonNegativeIntegerParam(request.query, 'limit'),
      skip: nonNegativeIntegerParam(request.query, 'skip'),
    }),
  );
}

export async function membership(_request: Request, services: Services): Promise<Reply> {
  const nodes = await clusterNodeNames(services);
  return json(200, { all_nodes: nodes, cluster_nodes: nodes });
}

/** `GET /_active_tasks`: this node's compactions, indexers and replications, in every worker process (server admins). */
export async function activeTasks(request: Request, services: Services): Promise<Reply> {
  requireServerAdmin(request.userCtx);
  return json(200, await nodeTasks(services.gather));
}
