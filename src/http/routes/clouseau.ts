/**
 * The Clouseau search API (`/{db}/_design/{d}/_search/{index}`, `…/_search_info/{index}`,
 * `/_search_analyze`), answered as a CouchDB without Clouseau answers it: 503 `Search is not
 * available`, after the same checks (membership, the design document, and for `_search_info` the
 * index). Divan's full-text search is the Nouveau API (`_nouveau`).
 */
import { notFound, searchUnavailable } from '../../errors/catalog.js';
import { requireServerAdmin } from '../../identity/authorization.js';
import type { Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/** `…/_search/{index}` and `…/_search_info/{index}`. */
export async function clouseauSearch(request: Request, services: Services): Promise<Reply> {
  const [db, , ddocName, kind, index] = request.segments;
  const opened = await services.databases.open(db!, request.userCtx);
  const { doc } = await opened.readDocument(`_design/${ddocName}`, undefined, {});
  const indexes = doc['indexes'];
  const known = indexes !== null && typeof indexes === 'object' && !Array.isArray(indexes) && index !== undefined && Object.hasOwn(indexes, index);
  if (kind === '_search_info' && !known) throw notFound('missing');
  await request.discardBody();
  throw searchUnavailable();
}

/** `POST /_search_analyze` (server admins, as every `/_…` path CouchDB does not open to others). */
export async function searchAnalyze(request: Request): Promise<Reply> {
  requireServerAdmin(request.userCtx);
  await request.discardBody();
  throw searchUnavailable();
}
