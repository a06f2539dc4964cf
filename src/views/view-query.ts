/**
 * Answers a view query from the index: map rows (with `total_rows`, `offset`, linked or own
 * documents) or reduced groups (view-reduce.ts). Storage does the range scans.
 */
import type { LoopTurns } from '../turns/loop-turns.js';
import type { Json, JsonObject } from '../json/json.js';
import type { Storage, ViewRange, ViewRow, ViewRowsResult } from '../storage/storage.js';
import { isObject } from '../documents/document-json.js';
import type { CheckedArgs } from './view-ranges.js';
import { rangesOf } from './view-ranges.js';

/** A document to show with a row: its id, and the revision a linked `{_id, _rev}` value names. */
export interface DocumentRef {
  id: string;
  rev?: string;
}

/** Reads documents as the caller may see them (attachments inline when asked); null for a missing or deleted one. */
export type DocumentReader = (refs: readonly DocumentRef[], options: { conflicts: boolean; attachments: boolean; attEncodingInfo: boolean }) => Promise<(JsonObject | null)[]>;

export interface IndexAt {
  storage: Storage;
  db: string;
  signature: string;
  view: number;
  /** Gives the event loop a turn between storage reads and between slices of rows; stops when the client left. */
  turns: LoopTurns;
  /** The update sequence the index had when the query read it. */
  seq?: number;
}

/** The rows of every range, with skip and limit over all of them. */
export async function scan(index: IndexAt, args: CheckedArgs, page: boolean): Promise<ViewRowsResult> {
  const ranges = rangesOf(args, index.view);
  const skip = page ? args.skip : 0;
  const limit = page ? args.limit : undefined;
  if (ranges.length === 1) return rangeRows(index, { ...ranges[0]!, skip, limit });
  const result: ViewRowsResult = { totalRows: 0, offset: 0, rows: [] };
  const wanted = limit === undefined ? Infinity : skip + limit;
  for (const [i, range] of ranges.entries()) {
    if (result.rows.length >= wanted) break;
    await index.turns.maybeYield();
    const part = await index.storage.views.rows(index.db, index.signature, { ...range, limit: wanted === Infinity ? undefined : wanted - result.rows.length });
    if (i === 0) result.offset = part.offset;
    result.totalRows = part.totalRows;
    result.rows.push(...part.rows);
  }
  if (ranges.length === 0) result.totalRows = (await index.storage.views.rows(index.db, index.signature, { view: index.view, inclusiveEnd: true, descending: false, skip: 0, limit: 0 })).totalRows;
  result.rows = result.rows.slice(skip, limit === undefined ? undefined : skip + limit);
  return result;
}

/** View rows read per storage call: one read of a long range would hold the process. */
export const VIEW_PAGE_ROWS = 1000;

/** How many rows at the end of `rows` share the last row's key and document id (one document emitting a key several times). */
export function trailingRun(rows: readonly ViewRow[]): number {
  const last = rows[rows.length - 1]!;
  let run = 0;
  while (run < rows.length && rows[rows.length - 1 - run]!.id === last.id && rows[rows.length - 1 - run]!.encoded.equals(last.encoded)) run++;
  return run;
}

/**
 * One range read a page at a time (keyset: each page starts at the last row's key and document id,
 * skipping the rows of that pair already read), with an event-loop turn between pages.
 */
export async function rangeRows(index: IndexAt, range: ViewRange): Promise<ViewRowsResult> {
  const wanted = range.limit ?? Infinity;
  const read = (part: ViewRange) => index.storage.views.rows(index.db, index.signature, part);
  const result = await read({ ...range, limit: Math.min(wanted, VIEW_PAGE_ROWS) });
  let more = result.rows.length === VIEW_PAGE_ROWS;
  while (more && result.rows.length < wanted) {
    await index.turns.maybeYield();
    const last = result.rows[result.rows.length - 1]!;
    const asked = Math.min(wanted - result.rows.length, VIEW_PAGE_ROWS);
    const page = await read({ ...range, startKey: last.encoded, startDocId: last.id, skip: trailingRun(result.rows), limit: asked, countOffset: false });
    for (const row of page.rows) result.rows.push(row);
    more = page.rows.length === asked;
  }
  return result;
}

/** A value `{_id}` (with an optional `_rev`) links the row to that document, as CouchDB's include_docs. */
export function refOf(id: string, value: Json): DocumentRef {
  if (isObject(value) && typeof value['_id'] === 'string') {
    return typeof value['_rev'] === 'string' ? { id: value['_id'], rev: value['_rev'] } : { id: value['_id'] };
  }
  return { id };
}

/**
 * CouchDB keeps a document's rows under one key as one entry (`{dups, Values}`) and always expands
 * it in ascending order, so a descending scan reverses documents and keys but not those values.
 * Within one page only: a page that ends inside such a run holds its last values, not its first.
 */
export function ascendingDuplicates<Row extends { id: string; key: Json }>(rows: Row[]): Row[] {
  const out: Row[] = [];
  let run: Row[] = [];
  let runOf = '';
  for (const row of rows) {
    const of = JSON.stringify([row.key, row.id]);
    if (of !== runOf) {
      out.push(...run.reverse());
      run = [];
      runOf = of;
    }
    run.push(row);
  }
  out.push(...run.reverse());
  return out;
}

/** `{total_rows, offset, rows}` of a map query. */
export async function mapQuery(index: IndexAt, args: CheckedArgs, read: DocumentReader): Promise<JsonObject> {
  const result = await scan(index, args, true);
  if (args.descending) result.rows = ascendingDuplicates(result.rows);
  const rows: JsonObject[] = result.rows.map((row) => ({ id: row.id, key: row.key, value: row.value }));
  if (args.includeDocs) {
    const docs = await read(result.rows.map((row) => refOf(row.id, row.value)), { conflicts: args.conflicts === true, attachments: args.attachments === true, attEncodingInfo: args.attEncodingInfo === true });
    rows.forEach((row, i) => (row['doc'] = docs[i] ?? null));
  }
  return { total_rows: result.totalRows, offset: result.offset, rows };
}
