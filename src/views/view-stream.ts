/**
 * A map query read a page at a time, for readers that consume rows as they come (`_list`): the
 * head (`total_rows`, `offset`) is known after the first page, and the rows follow in batches of
 * at most a storage page, each with its documents when `include_docs` asks, so the whole view is
 * never in memory. Pages continue by keyset as view-query.ts's `pagedRows`.
 */
import type { JsonObject } from '../json/json.js';
import type { ViewRange, ViewRow, ViewRowsResult } from '../storage/storage.js';
import type { CheckedArgs } from './view-ranges.js';
import { rangesOf } from './view-ranges.js';
import { ascendingDuplicates, refOf, trailingRun, VIEW_PAGE_ROWS, type DocumentReader, type IndexAt } from './view-query.js';

/** Rows to hand on: the head of the answer and its rows in batches. */
export interface RowStream {
  readonly head: JsonObject;
  readonly batches: AsyncIterable<JsonObject[]>;
}

/** The rows of one range, page after page; `first` is its first page, already read. */
async function* rangePages(index: IndexAt, range: ViewRange, first: ViewRowsResult): AsyncGenerator<ViewRow[]> {
  const wanted = range.limit ?? Infinity;
  let page = first;
  let asked = Math.min(wanted, VIEW_PAGE_ROWS);
  let got = 0;
  let run = 0;
  for (;;) {
    if (page.rows.length > 0) yield page.rows;
    got += page.rows.length;
    if (page.rows.length < asked || got >= wanted) return;
    await index.turns.maybeYield();
    const last = page.rows[page.rows.length - 1]!;
    // The rows of the last key and document already read, this page's and (when the page is all one run) the pages' before.
    const trailing = trailingRun(page.rows);
    run = trailing === page.rows.length ? run + trailing : trailing;
    asked = Math.min(wanted - got, VIEW_PAGE_ROWS);
    page = await index.storage.views.rows(index.db, index.signature, { ...range, startKey: last.encoded, startDocId: last.id, skip: run, limit: asked });
  }
}

const firstPage = (index: IndexAt, range: ViewRange): Promise<ViewRowsResult> =>
  index.storage.views.rows(index.db, index.signature, { ...range, limit: Math.min(range.limit ?? Infinity, VIEW_PAGE_ROWS) });

/**
 * A map query as a head and batches of rows. One range takes `skip` and `limit` in storage; several
 * (`keys`) are read one after the other, with `skip` and `limit` counted over all of them.
 */
export async function mapStream(index: IndexAt, args: CheckedArgs, read: DocumentReader): Promise<RowStream> {
  const ranges = rangesOf(args, index.view);
  const single = ranges.length === 1;
  const rangeAt = (at: number): ViewRange => (single ? { ...ranges[0]!, skip: args.skip, limit: args.limit } : { ...ranges[at]!, skip: 0, limit: undefined });
  const first = ranges.length > 0 ? await firstPage(index, rangeAt(0)) : await index.storage.views.rows(index.db, index.signature, { view: index.view, inclusiveEnd: true, descending: false, skip: 0, limit: 0 });
  const shaped = async (rows: ViewRow[]): Promise<JsonObject[]> => {
    const ordered = args.descending ? ascendingDuplicates(rows) : rows;
    const out: JsonObject[] = ordered.map((row) => ({ id: row.id, key: row.key, value: row.value }));
    if (!args.includeDocs) return out;
    const docs = await read(ordered.map((row) => refOf(row.id, row.value)), { conflicts: args.conflicts === true, attachments: args.attachments === true, attEncodingInfo: args.attEncodingInfo === true });
    out.forEach((row, i) => (row['doc'] = docs[i] ?? null));
    return out;
  };
  const batches = async function* (): AsyncGenerator<JsonObject[]> {
    let skip = single ? 0 : args.skip;
    let left = single ? Infinity : (args.limit ?? Infinity);
    for (let at = 0; at < ranges.length && left > 0; at++) {
      const range = rangeAt(at);
      for await (let rows of rangePages(index, range, at === 0 ? first : await firstPage(index, range))) {
        if (skip > 0) {
          const dropped = Math.min(skip, rows.length);
          rows = rows.slice(dropped);
          skip -= dropped;
        }
        if (rows.length > left) rows = rows.slice(0, left);
        left -= rows.length;
        if (rows.length > 0) yield await shaped(rows);
        if (left <= 0) return;
      }
    }
  };
  return { head: { total_rows: first.totalRows, offset: first.offset }, batches: batches() };
}
