import { methodNotAllowed, notFound } from '../errors/catalog.js';
import { requireServerAdmin } from '../identity/authorization.js';
import type { Request } from './request.js';
import type { Endpoint } from './services.js';
import { nodeConfig } from './routes/config.js';
import { attachment } from './routes/attachments.js';
import { bulkDocs, document as oneDocument, postDocument } from './routes/documents.js';
import { attachmentPathOf } from './document-path.js';
import { compact, database as databaseItself, security } from './routes/databases.js';
import { changes } from './routes/changes.js';
import { allDocs } from './routes/listings.js';
import { bulkGet, ensureFullCommit, missingRevs, openRevs, revsDiff } from './routes/replication.js';
import { activeTasks, allDbs, membership, up, uuids, welcome } from './routes/server.js';
import { replicate, scheduler } from './routes/replicate.js';
import { session } from './routes/session.js';
import { utils } from './routes/utils.js';

/** `/{db}`: POST writes a document (documents.ts), every other method is about the database. */
const database: Endpoint = (request, services) => (request.method === 'POST' ? postDocument : databaseItself)(request, services);

/** `GET /{db}/{id}?open_revs=…` reads revisions the replicator's way (replication.ts); `_local` documents have none. */
const document: Endpoint = (request, services) => {
  if (attachmentPathOf(request.segments) !== undefined) return attachment(request, services);
  const readsRevisions = (request.method === 'GET' || request.method === 'HEAD') && request.query.has('open_revs') && request.segments[1] !== '_local';
  return (readsRevisions ? openRevs : oneDocument)(request, services);
};

function only(methods: readonly string[], endpoint: Endpoint): Endpoint {
  return async (request, services) => {
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
  ['_session', session],
  ['_replicate', replicate],
]);

/** Endpoints below a database, by second path segment. */
const DATABASE_ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map([
  ['_all_docs', allDocs],
  ['_bulk_docs', bulkDocs],
  ['_security', security],
  ['_changes', changes],
  ['_revs_diff', revsDiff],
  ['_missing_revs', missingRevs],
  ['_bulk_get', bulkGet],
  ['_ensure_full_commit', ensureFullCommit],
  ['_compact', compact],
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
    if (first === '_node' && request.segments[2] === '_config') return nodeConfig;
    if (first === '_scheduler' && second !== undefined) return scheduler;
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
  const endpoint = DATABASE_ENDPOINTS.get(second);
  if (endpoint) {
    if (request.segments.length > 2) return async () => { throw notFound('missing'); };
    return endpoint;
  }
  if (second.startsWith('_') && second !== '_design' && second !== '_local') {
    return async () => {
      throw notFound('missing');
    };
  }
  return document;
}

function isSystemDatabase(name: string): boolean {
  return name === '_users' || name === '_replicator' || name === '_global_changes';
}
