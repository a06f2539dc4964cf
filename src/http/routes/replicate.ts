/**
 * `POST /_replicate` (any authenticated user, as CouchDB 3's `require_authenticated_user`),
 * `GET /_scheduler/jobs` and `GET /_scheduler/docs[/{db}[/{docid}]]` (server admins).
 */
import { isObject } from '../../documents/document-json.js';
import { authenticationRequired, badRequest, methodNotAllowed, notFound, replicationError, requestBodyNotObject } from '../../errors/catalog.js';
import { requireServerAdmin } from '../../identity/authorization.js';
import { ReplicationSpecError, RemoteError } from '../../replicator/replication-errors.js';
import { nodeDocs, nodeJobs } from '../../replicator/scheduler-answers.js';
import { withLocalEndpoints, type CallerIdentity } from '../../replicator/local-endpoints.js';
import { firstAuthSessionCookie } from '../../auth/cookie/codec.js';
import { nonNegativeIntegerParam } from '../query.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

function asCouchError(error: unknown): unknown {
  if (error instanceof ReplicationSpecError) return replicationError(error.status, error.error, error.reason);
  if (error instanceof RemoteError) return replicationError(500, error.error, error.reason);
  return error;
}

export async function replicate(request: Request, services: Services): Promise<Reply> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  if (request.userCtx.name === null && !request.userCtx.roles.includes('_admin')) throw authenticationRequired();
  const body = await request.json();
  if (!isObject(body)) throw requestBodyNotObject();
  try {
    const answer = await services.replicator.replicate(withLocalEndpoints(body, callerIdentity(request, services)), request.userCtx);
    return json(answer.status, answer.body);
  } catch (error) {
    throw asCouchError(error);
  }
}

/**
 * Where this request came in, and the headers of the one handler that authenticated the caller
 * (local-endpoints.ts): only what proved this identity is presented again, so the loopback
 * requests cannot be answered for another identity the request also carried.
 */
function callerIdentity(request: Request, services: Services): CallerIdentity {
  const socket = request.raw.socket;
  const address = (socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d)/, '');
  const host = address.includes(':') ? `[${address}]` : address;
  return { base: `${request.secure ? 'https' : 'http'}://${host}:${socket.localPort}/`, headers: identityHeaders(request, services) };
}

function identityHeaders(request: Request, services: Services): Record<string, string> {
  const headers: Record<string, string> = {};
  const handler = request.auth.handler;
  const authorization = request.header('authorization');
  if ((handler === 'default' || handler === 'jwt') && authorization !== undefined) headers['Authorization'] = authorization;
  const cookie = firstAuthSessionCookie(request.header('cookie'));
  if (handler === 'cookie' && cookie !== undefined) headers['Cookie'] = `AuthSession=${cookie}`;
  if (handler !== 'proxy') return headers;
  for (const setting of ['x_auth_username', 'x_auth_roles', 'x_auth_token'] as const) {
    const name = services.config.getString('chttpd_auth', setting);
    const value = request.header(name.toLowerCase());
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

const page = (request: Request): [number, number] => [nonNegativeIntegerParam(request.query, 'skip') ?? 0, nonNegativeIntegerParam(request.query, 'limit') ?? Infinity];

/** `/_scheduler/jobs`, `/_scheduler/docs`, `/_scheduler/docs/_replicator/{docid}`: every worker process's. */
export async function scheduler(request: Request, services: Services): Promise<Reply> {
  requireServerAdmin(request.userCtx);
  if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed(['GET', 'HEAD']);
  const [, kind, db, ...rest] = request.segments;
  const [skip, limit] = page(request);
  if (kind === 'jobs') {
    const jobs = await nodeJobs(services.gather);
    if (db === undefined) return json(200, { total_rows: jobs.length, offset: skip, jobs: jobs.slice(skip, skip + limit) });
    const job = jobs.find((each) => each['id'] === db);
    if (!job) throw notFound('missing');
    return json(200, job);
  }
  if (kind !== 'docs') return json(404, { error: 'not found' });
  // Divan's one replicator database is `_replicator`; any other path is CouchDB's invalid one.
  if (db !== undefined && db !== '_replicator') throw badRequest('Invalid path');
  const docs = await nodeDocs(services.gather);
  if (rest.length === 0) return json(200, { total_rows: docs.length, offset: skip, docs: docs.slice(skip, skip + limit) });
  const view = docs.find((each) => each['doc_id'] === rest.join('/'));
  if (!view) throw notFound('missing');
  return json(200, view);
}
