/**
 * Long `_all_docs` answers read and sent a page at a time. One storage call for a range of
 * 100 000 documents is one synchronous SQLite read that holds the process, and its answer built in
 * one piece sits whole in memory; instead the range is read in pages by id (keyset: the next page
 * starts at the last id read), with an event-loop turn between pages and a stop once the client
 * went away, and the rows are streamed (chunked) as they are read.
 */
import type { DocumentSummary, RangeOptions } from '../databases/types.js';
import type { OpenedDatabase } from '../databases/opened-database.js';
import type { JsonObject } from '../json/json.js';
import { LoopTurns } from '../turns/loop-turns.js';
import { streamedRows } from './streamed-json.js';
import { json, type Reply } from './reply.js';

/** Documents read per storage call: short enough that one read holds the loop only a few ms. */
const RANGE_PAGE_ROWS = 1000;

/** A listing's members before `rows` (`total_rows`, `offset`, maybe `update_seq`) and its rows as they are read. */
export interface StreamedListing {
  head: JsonObject;
  batches: (signal?: AbortSignal) => AsyncIterable<JsonObject[]>;
}

/** A listing as one JSON answer (`_all_docs/queries`). */
export async function wholeListing(listing: JsonObject | StreamedListing): Promise<JsonObject> {
  if (!isStreamed(listing)) return listing;
  const rows: JsonObject[] = [];
  for await (const batch of listing.batches()) rows.push(...batch);
  return { ...listing.head, rows };
}

/** The answer of a listing: a streamed one is sent (chunked) as it is read. */
export function listingReply(listing: JsonObject | StreamedListing): Reply {
  if (!isStreamed(listing)) return json(200, listing);
  const head = JSON.stringify(listing.head);
  const opening = `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"rows":[`;
  return streamedRows(200, opening, ']}', listing.batches);
}

function isStreamed(listing: JsonObject | StreamedListing): listing is StreamedListing {
  return 'batches' in listing && typeof listing['batches'] === 'function';
}

type RangeResult = Awaited<ReturnType<OpenedDatabase['listDocuments']>>;

/** A range read in pages: the first page (with `total_rows` and `offset`) and the pages after it, if any. */
interface RangePages {
  first: RangeResult;
  /** Undefined when the first page held the whole range. */
  rest?: (signal?: AbortSignal) => AsyncIterable<readonly DocumentSummary[]>;
}

/**
 * Reads the first page of `options`' range now (so a bad range is an ordinary error answer) and
 * returns how to read the rest: each next page starts at the last id read (inclusive, because
 * `descending` has no "just below" id) and drops that id, so a document written or deleted
 * between two pages neither repeats a row nor hides another.
 */
export async function rangePages(opened: OpenedDatabase, options: RangeOptions, pageRows = RANGE_PAGE_ROWS): Promise<RangePages> {
  const wanted = options.limit ?? Infinity;
  const first = await opened.listDocuments({ ...options, limit: Math.min(wanted, pageRows) });
  if (first.rows.length < pageRows || first.rows.length >= wanted) return { first };
  const rest = async function* (signal?: AbortSignal): AsyncIterable<readonly DocumentSummary[]> {
    const turns = LoopTurns.until(signal);
    let sent = first.rows.length;
    let lastId = first.rows[first.rows.length - 1]!.id;
    while (sent < wanted) {
      await turns.maybeYield();
      const asked = Math.min(wanted - sent, pageRows) + 1;
      const page = await opened.listDocuments({ ...options, startKey: lastId, skip: 0, limit: asked, countOffset: false });
      const rows = page.rows[0]?.id === lastId ? page.rows.slice(1) : page.rows.slice(0, asked - 1);
      if (rows.length === 0) return;
      yield rows;
      sent += rows.length;
      lastId = rows[rows.length - 1]!.id;
      if (page.rows.length < asked) return;
    }
  };
  return { first, rest };
}

/**
 * A `{…, rows}` answer already read (a view query): a long one is serialised and sent in slices
 * (chunked, with backpressure and loop turns) rather than as one string built in one go.
 */
export function rowsReply(body: JsonObject): Reply {
  const rows = body['rows'];
  if (!Array.isArray(rows) || rows.length <= RANGE_PAGE_ROWS) return json(200, body);
  const head = Object.fromEntries(Object.entries(body).filter(([name]) => name !== 'rows')) as JsonObject;
  const batches = async function* (): AsyncIterable<JsonObject[]> {
    for (let start = 0; start < rows.length; start += RANGE_PAGE_ROWS) yield rows.slice(start, start + RANGE_PAGE_ROWS) as JsonObject[];
  };
  return listingReply({ head, batches });
}
