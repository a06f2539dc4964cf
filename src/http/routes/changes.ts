/**
 * `GET/POST /{db}/_changes`: the `normal`, `longpoll`, `continuous` (alias `live`) and `eventsource`
 * feeds, with `since`, `limit`, `descending`, `style`, `include_docs`, `conflicts`, `heartbeat`,
 * `timeout`, the built-in filters `_doc_ids`, `_selector` and `_design`, and design documents'
 * JavaScript filter functions (`filter=ddoc/name`, run in the sandbox with CouchDB's `req`).
 *
 * Live feeds wait on the node's `ChangeNotifier` (no polling) and re-read storage when woken. Every
 * feed ends, with its `last_seq`, at the first of: `[chttpd] changes_timeout` after it started
 * (Divan's cap: CouchDB keeps a feed with a heartbeat open for ever), `timeout` without a change
 * (when there is no heartbeat), the expiry of the cookie or JWT that opened it, `limit` rows, the
 * node shutting down. Authorization is checked once, when the feed opens.
 */
import { sequencesOf } from '../../databases/sequences.js';
import { openListing } from '../document-path.js';
import { normalFeed, liveFeed } from '../changes/feeds.js';
import { parseArgs, readBody, requireNamedFunction } from '../changes/feed-args.js';
import { filterRequest } from '../changes/filter-request.js';
import type { Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/** `GET/POST /{db}/_changes` (the feeds: http/changes/). */
export async function changes(request: Request, services: Services): Promise<Reply> {
  const opened = await openListing(request, services);
  const body = await readBody(request, services);
  const found = await requireNamedFunction(request, opened);
  const named = found && { ...found, req: await filterRequest(request, services, opened, body), sandbox: services.sandbox, log: services.log };
  const info = await opened.info();
  const updateSeq = info?.updateSeq ?? 0;
  const args = parseArgs(request, services, opened, body, { updateSeq, sequences: sequencesOf(info), ...(named ? { named } : {}) });
  if (args.feed === 'normal') return normalFeed(args, updateSeq);
  return liveFeed(services, args);
}
