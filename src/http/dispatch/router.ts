import { badRequest, methodNotAllowed, nodeDown, notFound, reservedDocumentId, unknownEndpoint } from '../../errors/catalog.js';
import { requireServerAdmin } from '../../identity/authorization.js';
import type { Request } from '../request.js';
import type { Endpoint, Services } from '../services.js';
import type { Reply } from '../reply.js';
import { nodeConfig } from '../routes/config.js';
import { attachment } from '../routes/attachments.js';
import { bulkDocs, document as oneDocument, postDocument } from '../routes/documents.js';
import { designSlashRedirect } from '../routes/design-slash.js';
import { attachmentPathOf } from '../document-path.js';
import { compact, database as databaseItself, security } from '../routes/databases.js';
import { changes } from '../routes/changes.js';
import { copyDocument } from '../routes/copy.js';
import { dbsInfo, purge, purgedInfos, purgedInfosLimit, revsLimit } from '../routes/maintenance.js';
import { allDocs, allDocsQueries, designDocs, localDocs } from '../routes/listings.js';
import { designInfo } from '../routes/design-info.js';
import { list } from '../routes/lists.js';
import { show } from '../routes/shows.js';
import { update } from '../routes/updates.js';
import { explain, find, mangoIndex } from '../routes/mango.js';
import { bulkGet, ensureFullCommit, missingRevs, openRevs, revsDiff } from '../routes/replication.js';
import { nodeName, nodePrometheus, requireMetricsReader, nodeStats, nodeSystem, nodeVersions } from '../routes/node.js';
import { activeTasks, allDbs, membership, up, uuids, welcome } from '../routes/server.js';
import { replicate, scheduler } from '../routes/replicate.js';
import { reshard } from '../routes/reshard.js';
import { session } from '../routes/session.js';
import { utils } from '../routes/utils.js';
import { tempView, viewCleanup, viewCompact, viewQuery } from '../routes/views.js';
import { nouveauAnalyze, nouveauCleanup, nouveauInfo, nouveauQuery } from '../routes/nouveau.js';
import { partitionInfo, partitionQuery } from '../routes/partitions.js';
import { shards, syncShards } from '../routes/shards.js';
import { clouseauSearch, searchAnalyze } from '../routes/clouseau.js';

/** `/{db}`: POST writes a document (documents.ts), every other method is about the database. */
const database: Endpoint = (request, services) => (request.method === 'POST' ? postDocument : databaseItself)(request, services);

/** `GET /{db}/{id}?open_revs=…` reads revisions the replicator's way (replication.ts); `_local` documents have none; COPY copies (copy.ts). */
const document: Endpoint = (request, services) => {
  if (request.method === 'COPY') return copyDocument(request, services);
  if (attachmentPathOf(request.segments) !== undefined) return attachment(request, services);
  const readsRevisions = (request.method === 'GET' || request.method === 'HEAD') && request.query.has('open_revs') && request.segments[1] !== '_local';
  return (readsRevisions ? openRevs : oneDocument)(request, services);
};

function only(methods: readonly string[], endpoint: Endpoint): Endpoint {
  return (request, services) => {
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (!methods.includes(method)) throw methodNotAllowed(methods.includes('GET') ? [...methods, 'HEAD'] : methods);
    return endpoint(request, services);
  };
}

/** Server-level endpoints, by first path segment. */
const SERVER_ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map([
  ['_up', only(['GET'], up)],
  ['_uuids', only(['GET'], uuids)],
  ['_all_dbs', only(['GET'], allDbs)],
  ['_membership', only(['GET'], membership)],
  ['_active_tasks', only(['GET'], activeTasks)],
  ['_dbs_info', only(['GET', 'POST'], dbsInfo)],
  ['_session', session],
  ['_replicate', replicate],
  ['_search_analyze', only(['POST'], searchAnalyze)],
  ['_nouveau_analyze', only(['POST'], nouveauAnalyze)],
]);

/** Endpoints below a database, by second path segment. */
const DATABASE_ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map([
  ['_all_docs', allDocs],
  ['_local_docs', localDocs],
  ['_design_docs', designDocs],
  ['_bulk_docs', bulkDocs],
  ['_security', security],
  ['_changes', changes],
  ['_revs_diff', revsDiff],
  ['_missing_revs', missingRevs],
  ['_bulk_get', bulkGet],
  ['_ensure_full_commit', ensureFullCommit],
  ['_compact', compact],
  ['_find', find],
  ['_explain', explain],
  ['_revs_limit', revsLimit],
  ['_purge', purge],
  ['_purged_infos_limit', purgedInfosLimit],
  ['_purged_infos', only(['GET'], purgedInfos)],
  ['_view_cleanup', viewCleanup],
  ['_nouveau_cleanup', nouveauCleanup],
  ['_temp_view', tempView],
  ['_sync_shards', syncShards],
]);

/** Endpoints below a design document, by fourth path segment. */
const DESIGN_ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map([
  ['_view', viewQuery],
  ['_show', only(['GET', 'POST'], show)],
  // OPTIONS runs the list as GET does (chttpd_show:handle_view_list_req).
  ['_list', (request, services) => (request.method === 'OPTIONS' ? list(request, services) : only(['GET', 'POST'], list)(request, services))],
  ['_update', update],
  ['_search', only(['GET', 'POST'], clouseauSearch)],
  ['_search_info', only(['GET'], clouseauSearch)],
  ['_nouveau', nouveauQuery],
  ['_nouveau_info', nouveauInfo],
]);

/**
 * CouchDB routes by path segment: the first picks a server endpoint or a database, the second an
 * endpoint of that database or a document.
 */
export function route(request: Request, extraServerEndpoints: ReadonlyMap<string, Endpoint> = new Map()): Endpoint {
  const [first, second] = request.segments;
  if (first === undefined) return only(['GET'], welcome);
  if (first.startsWith('_')) {
    const endpoint = extraServerEndpoints.get(first) ?? SERVER_ENDPOINTS.get(first);
    if (endpoint && request.segments.length === 1) return endpoint;
    if (first === '_node') return nodeEndpoint(request);
    if (first === '_scheduler' && second !== undefined) return scheduler;
    if (first === '_reshard') return reshard;
    // `/_utils` and every file below it (the browser login page).
    if (first === '_utils') return utils;
    if (!isSystemDatabase(first)) {
      // Unknown `_` paths are server-admin territory in CouchDB; for admins they are then database
      // paths whose name is illegal (400 illegal_database_name).
      return async (req, services) => {
        requireServerAdmin(req.userCtx);
        return (second === undefined ? database : document)(req, services);
      };
    }
  }
  if (second === undefined) return database;
  if (second === '_partition') return partition;
  // `_index` has sub-paths (`_bulk_delete`, `{ddoc}/json/{name}`).
  if (second === '_index') return mangoIndex;
  if (second === '_shards') return shards;
  const designEndpoint = second === '_design' && request.segments.length > 3 ? DESIGN_ENDPOINTS.get(request.segments[3]!) : undefined;
  if (designEndpoint) return designEndpoint;
  if (second === '_compact' && request.segments.length > 2) return viewCompact;
  const endpoint = DATABASE_ENDPOINTS.get(second);
  if (endpoint && request.segments.length === 2) return endpoint;
  if (second === '_design' && request.segments[3] === '_info' && request.segments.length === 4) return only(['GET'], designInfo);
  if (request.segments.length === 3) {
    const below = DATABASE_SUB_ENDPOINTS.get(`${second}/${request.segments[2]}`);
    if (below) return below;
  }
  // `_design%2Fname` and `_local%2Fname`: one segment naming the document (GET of a design one redirects, as CouchDB).
  if (second.startsWith('_design/') && (request.method === 'GET' || request.method === 'HEAD')) return designSlashRedirect;
  if ((second.startsWith('_design/') || second.startsWith('_local/')) && request.segments.length === 2) return document;
  if (endpoint || (second.startsWith('_') && second !== '_design' && second !== '_local')) return unknownDatabaseEndpoint;
  return document;
}

/** What `/{db}/_partition/{p}/…` may query: as `/{db}/…?partition=p` (chttpd_db's handle_partition_req). */
const PARTITION_ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map([
  ['_all_docs', allDocs],
  ['_find', find],
  ['_explain', explain],
]);

/** `/{db}/_partition/{p}[/…]`: the partition's info, or a query of the partition. */
const partition: Endpoint = async (request, services) => {
  const [db, , part, ...rest] = request.segments as [string, string, string | undefined, ...string[]];
  if (part === undefined) throw badRequest('invalid_partition_req');
  if (rest.length === 0) return partitionInfo(request, services);
  const query = await partitionQuery(request, services);
  const isView = rest[0] === '_design' && rest[2] === '_view' && (rest.length === 4 || (rest.length === 5 && rest[4] === 'queries'));
  const isAllDocsQueries = rest.length === 2 && rest[0] === '_all_docs' && rest[1] === 'queries';
  const isSearch = rest[0] === '_design' && rest[2] === '_nouveau' && rest.length === 4;
  const endpoint = isView ? viewQuery : isSearch ? nouveauQuery : isAllDocsQueries ? allDocsQueries : rest.length === 1 ? PARTITION_ENDPOINTS.get(rest[0]!) : undefined;
  if (endpoint === undefined) throw notFound();
  return endpoint(request.retargeted([db, ...rest], query), services);
};

/** `/{db}/{endpoint}/{part}`. */
const DATABASE_SUB_ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map([['_all_docs/queries', allDocsQueries]]);

/**
 * `/{db}/_xxx` that names no endpoint: after the database is opened (404 when it does not exist),
 * a GET answers 404 naming the endpoint, not `missing` (which clients read as "no such database");
 * a write is refused for its reserved id, as CouchDB refuses it.
 */
const unknownDatabaseEndpoint: Endpoint = async (request, services) => {
  const db = request.segments[0]!;
  await services.databases.openListing(db, request.userCtx);
  if (request.method === 'GET' || request.method === 'HEAD' || request.segments.length > 2) throw unknownEndpoint(request.segments.slice(1).join('/'));
  throw reservedDocumentId();
};

/** `/_node/{node}/…`, by third segment; every other `_node` path is server-admin territory. */
const NODE_ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map([
  ['_config', nodeConfig],
  ['_stats', only(['GET'], nodeStats)],
  ['_prometheus', only(['GET'], nodePrometheus)],
  ['_system', only(['GET'], nodeSystem)],
  ['_versions', only(['GET'], nodeVersions)],
]);

const METRICS_ENDPOINTS = new Set(['_stats', '_prometheus', '_system']);

function nodeEndpoint(request: Request): Endpoint {
  const [, node, what] = request.segments;
  const fixedLength = what !== undefined && what !== '_config' && what !== '_stats';
  const endpoint = what === undefined ? only(['GET'], nodeName) : NODE_ENDPOINTS.get(what);
  return async (req, services) => {
    if (node === undefined) throw badRequest('Incomplete path to _node request');
    // Who may ask is checked before which node is asked for, as CouchDB authorises before routing.
    if (what !== undefined && METRICS_ENDPOINTS.has(what)) requireMetricsReader(req.userCtx);
    else requireServerAdmin(req.userCtx);
    if (node !== '_local' && node !== services.nodeName()) return askPeer(node, req, services);
    if (endpoint === undefined || (fixedLength && req.segments.length > 3)) throw notFound('missing');
    return endpoint(req, services);
  };
}

/** `/_node/{another node}/…` on a PostgreSQL cluster: that node's own answer, as CouchDB calls the node. */
async function askPeer(node: string, request: Request, services: Services): Promise<Reply> {
  if (services.peers === undefined || request.segments[2] === '_config' || !(await services.peers.names()).includes(node)) throw notFound(`no such node: ${node}`);
  if (request.method !== 'GET') throw methodNotAllowed(['GET']);
  const answer = await services.peers.ask(node, { path: request.segments.slice(2) });
  if (answer === undefined) throw nodeDown(node);
  return { status: answer.status, body: Buffer.from(answer.body, 'utf8'), headers: { 'Content-Type': answer.contentType } };
}

function isSystemDatabase(name: string): boolean {
  return name === '_users' || name === '_replicator' || name === '_global_changes';
}
