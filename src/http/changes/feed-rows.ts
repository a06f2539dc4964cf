import { isObject } from '../../documents/document-json.js';
import { javascriptError } from '../../errors/catalog.js';
import type { ChangeRow } from '../../databases/types.js';
import { matchesSelector } from '../../documents/selector.js';
import type { Json, JsonObject } from '../../json/json.js';
import { LoopTurns } from '../../turns/loop-turns.js';
import { filterReadsDocs, type FeedArgs } from './feed-args.js';

/** Rows read from storage per query; live feeds stream them batch by batch. */
const BATCH = 1000;

function render(change: ChangeRow, revs: readonly string[], args: FeedArgs): JsonObject {
  const entry: JsonObject = { seq: args.sequences.format(change.seq), id: change.id, changes: revs.map((rev) => ({ rev })) };
  if (change.deleted) entry['deleted'] = true;
  if (args.includeDocs) entry['doc'] = change.body ? args.opened.listedView(args.attachments).listed(fullDocument(change)) : null;
  return entry;
}

function fullDocument(change: ChangeRow): JsonObject {
  const entries: [string, Json][] = [
    ['_id', change.id],
    ['_rev', change.changes[0]!],
  ];
  if (change.deleted) entries.push(['_deleted', true]);
  entries.push(...Object.entries(change.body ?? {}));
  if (change.conflicts !== undefined && change.conflicts.length > 0) entries.push(['_conflicts', change.conflicts]);
  return Object.fromEntries(entries) as JsonObject;
}

/** Each row's documents, one per revision of `changes` (winner first); undefined where none may be seen. */
async function leafDocuments(args: FeedArgs, rows: readonly ChangeRow[], withDeleted: boolean): Promise<(JsonObject | undefined)[][]> {
  // Each revision is matched on its own document (CouchDB opens every leaf for style=all_docs).
  const multi = rows.filter((row) => row.changes.length > 1);
  const opened = multi.length === 0 ? [] : await args.opened.openRevisions(multi.map((row) => ({ id: row.id, revs: row.changes })));
  const leafDocs = new Map<string, Map<string, JsonObject>>();
  multi.forEach((row, i) => {
    const docs = new Map<string, JsonObject>();
    for (const item of opened[i] ?? []) {
      if (!('ok' in item)) continue;
      const stored = item.ok;
      docs.set(stored.rev, args.opened.view.listed(Object.fromEntries([['_id', stored.id], ['_rev', stored.rev], ...(stored.deleted ? [['_deleted', true]] : []), ...Object.entries(stored.body)]) as JsonObject));
    }
    leafDocs.set(row.id, docs);
  });
  return rows.map((change) => {
    // Matched on what the caller may see: a filter must not probe fields the read rule hides.
    const seen = change.body !== undefined || (withDeleted && change.deleted);
    const winnerDoc = seen ? args.opened.view.listed(fullDocument({ ...change, conflicts: undefined })) : undefined;
    return change.changes.map((rev, index) => (index === 0 ? winnerDoc : leafDocs.get(change.id)?.get(rev)));
  });
}

const truthy = (value: Json): boolean => value !== null && value !== false && value !== 0 && value !== '';

/**
 * What a filter function threw, as CouchDB's query server reports it: the request fails (an Error
 * as its name and message; `{error, reason}` as given).
 */
function thrownByFilter(error: Json): Error {
  if (isObject(error) && typeof error['error'] === 'string') {
    const reason = error['reason'] ?? error['message'];
    return javascriptError(error['error'], typeof reason === 'string' ? reason : JSON.stringify(reason ?? null));
  }
  return javascriptError('unnamed_error', JSON.stringify(error));
}

/** A filter function over every document at once (one sandbox request, resumed past its time budget); a failing call lets its document out. */
async function functionPasses(db: string, filter: Extract<FeedArgs['filter'], { kind: 'function' }>, docs: (JsonObject | undefined)[][]): Promise<boolean[][]> {
  const argLists = docs.flat().flatMap((doc) => (doc === undefined ? [] : [[doc, filter.req]]));
  const outcomes = argLists.length === 0 ? [] : await filter.sandbox.filter(db, filter.ddoc, ['filters', filter.name], argLists);
  let next = 0;
  return docs.map((list) =>
    list.map((doc) => {
      if (doc === undefined) return false;
      const outcome = outcomes[next++]!;
      if (!outcome.ok && outcome.kind === 'thrown') throw thrownByFilter(outcome.error);
      if (!outcome.ok) filter.log.warning(`filter ${filter.ddoc._id}/${filter.name} failed on ${String(doc['_id'])}: ${JSON.stringify(outcome.error)}`);
      return outcome.ok && truthy(outcome.value);
    }),
  );
}

/**
 * Applies the filter to rows read from storage; returns the rows to send. Selector matching gives
 * the event loop a turn through `turns` (one per feed read, across its batches); filter functions
 * run off the main thread.
 */
export async function filterRows(args: FeedArgs, rows: ChangeRow[], turns: LoopTurns): Promise<{ change: ChangeRow; entry: JsonObject }[]> {
  const passing = await passingRows(args, rows, turns);
  if (args.includeDocs && args.attachments) await args.opened.inlineListedDocs(passing.map(({ entry }) => entry));
  return passing;
}

async function passingRows(args: FeedArgs, rows: ChangeRow[], turns: LoopTurns): Promise<{ change: ChangeRow; entry: JsonObject }[]> {
  const filter = args.filter;
  if (filter.kind === 'design') rows = rows.filter((row) => row.id.startsWith('_design/'));
  if (filter.kind === 'view') {
    const passing = await filter.matches(rows.map((change) => fullDocument({ ...change, conflicts: undefined })));
    rows = rows.filter((_, i) => passing[i]);
  }
  if (filter.kind !== 'selector' && filter.kind !== 'function') return rows.map((change) => ({ change, entry: render(change, change.changes, args) }));
  const docs = await leafDocuments(args, rows, filter.kind === 'function');
  const passes = filter.kind === 'function' ? await functionPasses(args.opened.db, filter, docs) : undefined;
  const result: { change: ChangeRow; entry: JsonObject }[] = [];
  for (const [at, change] of rows.entries()) {
    await turns.maybeYield();
    const passing = change.changes.filter((_, index) => {
      if (passes) return passes[at]![index]!;
      const doc = docs[at]![index];
      return doc !== undefined && filter.kind === 'selector' && matchesSelector(filter.selector, doc);
    });
    if (passing.length > 0) result.push({ change, entry: render(change, passing, args) });
  }
  return result;
}

export interface Scan {
  entries: JsonObject[];
  /** Sequence of the last change read (sent or filtered out); `from` when none. */
  last: number;
  /** True when storage had nothing more after `last` at the time of reading. */
  exhausted: boolean;
}

/** Reads changes after `from`, in batches, until `max` rows pass the filter or storage has no more. */
export async function scan(args: FeedArgs, from: number, max: number | undefined): Promise<Scan> {
  const entries: JsonObject[] = [];
  const turns = LoopTurns.until(args.signal);
  let cursor = from;
  for (;;) {
    const wanted = max === undefined ? BATCH : Math.min(BATCH, max - entries.length);
    if (wanted <= 0) return { entries, last: cursor, exhausted: false };
    const unfiltered = args.filter.kind === 'none' || args.filter.kind === 'doc_ids';
    const rows = await args.opened.changes({
      since: cursor,
      limit: unfiltered ? wanted : BATCH,
      includeDocs: args.includeDocs || filterReadsDocs(args.filter),
      allLeaves: args.allLeaves,
      conflicts: args.conflicts && args.includeDocs,
      ids: args.filter.kind === 'doc_ids' ? args.filter.ids : undefined,
    });
    const passed = await filterRows(args, rows, turns);
    for (let i = 0; i < passed.length; i++) {
      entries.push(passed[i]!.entry);
      if (max !== undefined && entries.length >= max) {
        // Stop at the row that filled the limit: later rows of this batch are read again next time.
        return { entries, last: passed[i]!.change.seq, exhausted: false };
      }
    }
    if (rows.length > 0) cursor = rows[rows.length - 1]!.seq;
    if (rows.length < (unfiltered ? wanted : BATCH)) return { entries, last: cursor, exhausted: true };
  }
}

export async function pendingAfter(args: FeedArgs, last: number): Promise<number> {
  const info = await args.opened.info();
  return Math.max(0, (info?.updateSeq ?? 0) - last);
}
