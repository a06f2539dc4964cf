import { badRequest, methodNotAllowed, notFound, notImplemented, requestBodyNotObject } from '../../errors/catalog.js';
import { requireServerAdmin } from '../../identity/authorization.js';
import { isObject } from '../../documents/document-json.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';

/**
 * `/_reshard…`: CouchDB's shard splitting (mem3_reshard_httpd), answered as a one-node CouchDB
 * with no split jobs answers it. Divan keeps each database whole, so there is nothing to split:
 * reads show a running, idle resharder; a request to start or stop work is 501 `not_implemented`,
 * CouchDB's answer when resharding is switched off. Server admins only, as every `/_…` path.
 */
export async function reshard(request: Request): Promise<Reply> {
  requireServerAdmin(request.userCtx);
  const [, what, jobId, jobPart, ...rest] = request.segments;
  const reading = request.method === 'GET' || request.method === 'HEAD';
  if (what === undefined) {
    if (!reading) throw methodNotAllowed(['GET', 'HEAD']);
    return json(200, { state: 'running', state_reason: null, completed: 0, failed: 0, running: 0, stopped: 0, total: 0 });
  }
  if (what === 'state' && jobId === undefined) return resharderState(request, reading);
  if (what !== 'jobs' || rest.length > 0) throw notFound();
  if (jobId === undefined) {
    if (reading) return json(200, { total_rows: 0, offset: 0, jobs: [] });
    if (request.method === 'POST') throw notImplemented();
    throw methodNotAllowed(['GET', 'HEAD', 'POST']);
  }
  // A job id always names a job that does not exist here.
  if (jobPart === undefined) {
    if (reading || request.method === 'DELETE') throw notFound();
    throw methodNotAllowed(['GET', 'HEAD', 'DELETE']);
  }
  if (jobPart !== 'state') throw notFound();
  if (reading || request.method === 'PUT') throw notFound();
  throw methodNotAllowed(['GET', 'HEAD', 'PUT']);
}

/** `GET /_reshard/state`, and `PUT` checked as CouchDB checks it before it would start or stop splitting. */
async function resharderState(request: Request, reading: boolean): Promise<Reply> {
  if (reading) return json(200, { state: 'running', reason: null });
  if (request.method !== 'PUT') throw methodNotAllowed(['GET', 'HEAD', 'PUT']);
  const body = await request.json();
  if (!isObject(body)) throw requestBodyNotObject();
  const state = body['state'];
  if (state === undefined) throw badRequest('Expected a `state` field');
  if (state !== 'running' && state !== 'stopped') throw badRequest('State field not `running` or `stopped`');
  // Already running: starting is CouchDB's `{"ok":true}`; stopping is work Divan has no switch for.
  if (state === 'running') return json(200, { ok: true });
  throw notImplemented();
}
