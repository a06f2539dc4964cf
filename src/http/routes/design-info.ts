import { designInfoBody } from '../../design/design-info.js';
import type { JsonObject } from '../../json/json.js';
import { openListing } from '../document-path.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/** `GET /{db}/_design/{name}/_info`: the design document's view index (404 when the design document is missing). */
export async function designInfo(request: Request, services: Services): Promise<Reply> {
  const opened = await openListing(request, services);
  const name = request.segments[2]!;
  const { doc } = await opened.readDocument(`_design/${name}`, undefined, {});
  const group = await services.views.group(opened, name);
  const body = designInfoBody(name, doc, await services.views.info(opened, group));
  // The index's own signature (src/views/view-group.ts), the one `_view_cleanup` keeps or drops.
  return json(200, { ...body, view_index: { ...(body['view_index'] as JsonObject), signature: group.signature } });
}
