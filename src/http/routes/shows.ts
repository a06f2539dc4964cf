import { CouchError } from '../../errors/couch-error.js';
import { showErrorOf, showResponse, SHOWS } from '../../design/render-functions.js';
import { renderedResponse } from '../../design/render-response.js';
import { renderCall, renderedReply, renderRequest, runRender } from '../design-render.js';
import type { Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/**
 * `GET`/`POST /{db}/_design/{d}/_show/{f}[/{id}]` (chttpd_show:handle_doc_show_req): the function
 * renders the document (null without an id or when it is missing) as a response object or a string.
 */
export async function show(request: Request, services: Services): Promise<Reply> {
  if (request.segments.length < 5) throw new CouchError(404, 'show_error', 'Invalid path.');
  const call = await renderCall(request, services, SHOWS);
  const value = await runRender(services, call, SHOWS, await renderRequest(request, services, call), showErrorOf(call.doc, call.id));
  return renderedReply(services.config, renderedResponse(showResponse(value), 200));
}
