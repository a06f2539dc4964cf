/**
 * `GET/POST /{db}/_changes`: the `normal`, `longpoll`, `continuous` (alias `live`) and `eventsource`
 * feeds, with `since`, `limit`, `descending`, `style`, `include_docs`, `conflicts`, `heartbeat`,
 * `timeout`, the built-in filters `_doc_ids`, `_selector` and `_design`, and design documents'
 * JavaScript filter functions (`filter=ddoc/name`, run in the sandbox with CouchDB's `req`).
 *
 * Live feeds wait on the node's `ChangeNotifier` (no polling) and re-read storage when woken. Every
 * feed ends, with its `last_seq`, at the first of: `[chttpd] changes_timeout` after it started
 * (Divan's cap: CouchDB keeps a feed with a heartbeat open for ever), `timeout` without a change
 * (when there is no heartbeat), the expiry of the cookie or JWT that opened it (as authentication
 * reports it), `limit` rows, the node shutting down. Authorization is checked once, when the feed
 * opens. The feeds themselves are src/changes/; this file parses the query and writes the stream.
 */
import type { FeedArgs } from '../../changes/feed.js';
import { LiveFeed, normalFeed } from '../../changes/feeds.js';
import { sequencesOf } from '../../databases/sequences.js';
import { requestObject } from '../../design/request-object.js';
import { openListing } from '../document-path.js';
import { parseArgs, readBody, requireNamedFunction } from '../changes/feed-query.js';
import { writerFor } from '../changes/feed-writers.js';
import { json, type Reply, type ReplyStream } from '../reply.js';
import { databaseFacts, requestFacts } from '../request-facts.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/** `GET/POST /{db}/_changes`. */
export async function changes(request: Request, services: Services): Promise<Reply> {
  const opened = await openListing(request, services, true);
  const body = await readBody(request, services);
  const found = await requireNamedFunction(request, opened);
  const named = found && { ...found, req: requestObject(requestFacts(request, body), await databaseFacts(services, opened)), sandbox: services.sandbox, log: services.log };
  // The database's facts give its sequences' instance; the caller's update_seq (in an access
  // database, a query over their rows) is read only when `since=now` or the answer needs it.
  const info = await opened.storage.databaseInfo(opened.db);
  const updateSeq = once(async () => (opened.scope ? opened.scope.updateSeq() : (info?.updateSeq ?? 0)));
  const args = await parseArgs(request, services, opened, body, { updateSeq, sequences: sequencesOf(info), ...(named ? { named } : {}) });
  if (args.feed === 'normal') return json(200, await normalFeed(args, updateSeq));
  return liveFeed(services, args);
}

function once<T>(read: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= read());
}

function liveFeed(services: Services, args: FeedArgs): Reply {
  const headers: Record<string, string> = args.feed === 'eventsource' ? { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' } : {};
  const writer = writerFor(args.feed as Exclude<FeedArgs['feed'], 'normal'>, args.sequences);
  return {
    status: 200,
    headers,
    stream: async (out: ReplyStream) => {
      const closed = services.metrics.changesFeedOpened();
      try {
        await new LiveFeed(services.changes, args, writer, out).run();
      } finally {
        closed();
      }
    },
  };
}
