import { emptyDocumentId } from '../../errors/catalog.js';
import { CouchError } from '../../errors/couch-error.js';
import { writeDocument } from '../../databases/document-writes.js';
import { namedError } from '../../design/render-functions.js';
import { updateErrorOf, updateParts, UPDATES, withWriteHeaders } from '../../design/render-functions.js';
import { renderedResponse } from '../../design/render-response.js';
import { renderCall, renderedReply, renderRequest, runRender } from '../design-render.js';
import type { Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/**
 * `POST /{db}/_design/{d}/_update/{f}` (the document is null) and `PUT …/_update/{f}/{id}`
 * (chttpd_show:handle_doc_update_req): the function returns `[doc, response]`; a returned document
 * is written through the write pipeline (validation functions and `_users` rules apply) and the
 * answer, 201 unless the function sets `code`, names its revision and id in
 * `X-Couch-Update-NewRev` and `X-Couch-Id`.
 */
export async function update(request: Request, services: Services): Promise<Reply> {
  if (request.segments.length < 5) throw new CouchError(404, 'update_error', 'Invalid path.');
  const call = await renderCall(request, services, UPDATES, () => {
    if (request.method === 'GET' || request.method === 'HEAD') throw namedError('method_not_allowed', 'Update functions do not allow GET');
  });
  const value = await runRender(services, call, UPDATES, await renderRequest(request, services, call), updateErrorOf);
  const { doc, response } = updateParts(value);
  if (doc === null) return renderedReply(services.config, renderedResponse(response, 200));
  if (typeof doc['_id'] !== 'string' || doc['_id'] === '') throw emptyDocumentId();
  const written = await writeDocument(call.opened, doc, { newEdits: true });
  return renderedReply(services.config, renderedResponse(withWriteHeaders(response, written), 201));
}
