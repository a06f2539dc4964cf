import { createHash } from 'node:crypto';
import { CouchError } from '../../errors/couch-error.js';
import { showErrorOf, showResponse, SHOWS } from '../../design/render-functions.js';
import { renderedResponse, type RenderedResponse } from '../../design/render-response.js';
import { renderCall, renderedReply, renderRequest, runRender } from '../design-render.js';
import type { Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';
import { matchesIfNoneMatch } from '../static.js';

/**
 * `GET`/`POST /{db}/_design/{d}/_show/{f}[/{id}]` (chttpd_show:handle_doc_show_req): the function
 * renders the document (null without an id or when it is missing) as a response object or a string.
 * The answer's ETag stands for what CouchDB's does (the design document's and the document's
 * revisions, `Accept` and the caller's roles), so an `If-None-Match` that matches is a 304 without
 * running the function.
 */
export async function show(request: Request, services: Services): Promise<Reply> {
  if (request.segments.length < 5) throw new CouchError(404, 'show_error', 'Invalid path.');
  const call = await renderCall(request, services, SHOWS);
  const etag = showEtag(call.ddoc._rev, call.doc?.['_rev'], request.header('accept'), request.userCtx.roles);
  if (matchesIfNoneMatch(request.header('if-none-match'), etag)) return { status: 304, headers: { ETag: etag } };
  const value = await runRender(services, call, SHOWS, await renderRequest(request, services, call), showErrorOf(call.doc, call.id));
  return renderedReply(services.config, withEtag(renderedResponse(showResponse(value), 200), etag));
}

function showEtag(ddocRev: string, docRev: unknown, accept: string | undefined, roles: readonly string[]): string {
  const digest = createHash('sha256').update(JSON.stringify([ddocRev, docRev ?? null, accept ?? null, roles])).digest();
  return `"${BigInt(`0x${digest.subarray(0, 16).toString('hex')}`).toString(36).toUpperCase()}"`;
}

/** chttpd_show:apply_etag: the server's ETag replaces the function's own, and the answer varies with `Accept`. */
function withEtag(rendered: RenderedResponse, etag: string): RenderedResponse {
  const headers = Object.fromEntries(Object.entries(rendered.headers).filter(([name]) => !['etag', 'vary'].includes(name.toLowerCase())));
  return { ...rendered, headers: { ...headers, ETag: etag, Vary: 'Accept' } };
}
