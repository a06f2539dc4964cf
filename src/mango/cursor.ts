/**
 * Running a planned `_find`: read the chosen index in batches (a json index from storage within its
 * key range, `_all_docs` within the `_id` range), match each document against the whole selector
 * (as the caller may see it), skip, stop at `limit`, and remember where the last result was (the
 * bookmark). Only the rows of the key range are read; a batch is as large as the page needs.
 */
import type { OpenedDatabase } from '../databases/opened-database.js';
import { matchesSelector } from '../documents/selector.js';
import { tooManyExamined } from '../errors/mango-errors.js';
import { LoopTurns } from '../turns/loop-turns.js';
import type { JsonObject } from '../json/json.js';
import type { IndexPosition } from '../storage/storage.js';
import type { FindRequest } from './find-request.js';
import type { Plan } from './planner.js';
import { afterPrefix, storedBounds } from './index-keys.js';
import { decodeBookmark } from './results.js';
import { partitionKeyPrefix, partitionRange } from '../databases/partitions.js';

/** Rows read per storage query at most. */
const MAX_BATCH = 1000;

export interface Found {
  doc: JsonObject;
  position: IndexPosition;
}

export interface ScanStats {
  keysExamined: number;
  docsExamined: number;
}

/** A row read from an index: its position and the document as stored. */
interface Row {
  position: IndexPosition;
  doc: JsonObject;
}

type Reader = (after: IndexPosition | undefined, limit: number) => Promise<Row[]>;

/** A partitioned index's rows of one partition: the planned bounds behind the partition's prefix, open ends at its edges. */
function partitionBounds(plan: Plan, partition: string | undefined): { gte?: Uint8Array; lt?: Uint8Array } {
  if (partition === undefined || plan.index.partitioned !== true) return { gte: plan.keys.gte, lt: plan.keys.lt };
  const prefix = partitionKeyPrefix(partition);
  return { gte: Buffer.concat([prefix, plan.keys.gte ?? new Uint8Array(0)]), lt: plan.keys.lt === undefined ? afterPrefix(prefix) : Buffer.concat([prefix, plan.keys.lt]) };
}

function jsonIndexReader(opened: OpenedDatabase, plan: Plan, partition: string | undefined): Reader {
  const bounds = partitionBounds(plan, partition);
  const { gte, lt } = storedBounds(bounds.gte, bounds.lt);
  return async (after, limit) => {
    const rows = await opened.storage.indexes.scan(opened.db, plan.index.signature, { gte, lt, after, descending: plan.descending, limit });
    return rows.map((row) => ({ position: { key: row.key, id: row.id }, doc: { _id: row.id, _rev: row.rev, ...row.body } as JsonObject }));
  };
}

const NO_KEY = new Uint8Array(0);

function allDocsReader(opened: OpenedDatabase, plan: Plan, partition: string | undefined): Reader {
  const range = plan.ranges.get('_id');
  let low = typeof range?.low?.value === 'string' ? range.low.value : undefined;
  let high = typeof range?.high?.value === 'string' ? range.high.value : undefined;
  if (partition !== undefined) {
    // A partition is one range of ids: the tighter bound of each end wins.
    const { start, end } = partitionRange(partition);
    low = low === undefined || low < start ? start : low;
    high = high === undefined || high > end ? end : high;
  }
  return async (after, limit) => {
    // Bounds are inclusive here: the selector, matched on every row, drops an excluded end.
    const start = after?.id ?? (plan.descending ? high : low);
    const result = await opened.listDocuments({
      startKey: start,
      endKey: plan.descending ? low : high,
      descending: plan.descending,
      limit: limit + (after === undefined ? 0 : 1),
      includeDocs: true,
      countOffset: false,
    });
    const rows = after === undefined ? result.rows : result.rows.filter((row) => row.id !== after.id);
    return rows.slice(0, limit).map((row) => ({ position: { key: NO_KEY, id: row.id }, doc: { _id: row.id, _rev: row.rev, ...row.body } as JsonObject }));
  };
}

/** What one `_find` may spend: documents examined at most, and the client's presence. */
interface ScanBudget {
  maxExamined: number;
  /** Aborted when the client went away: the scan stops. */
  signal?: AbortSignal;
}

/**
 * The documents of one page of a `_find`, and what reading them cost. The event loop gets a turn
 * every few milliseconds; past `budget.maxExamined` documents the query is refused.
 */
export async function runCursor(opened: OpenedDatabase, request: FindRequest, plan: Plan, budget: ScanBudget): Promise<{ found: Found[]; stats: ScanStats }> {
  const stats: ScanStats = { keysExamined: 0, docsExamined: 0 };
  const found: Found[] = [];
  if (plan.keys.empty || request.limit === 0) return { found, stats };
  const special = plan.index.type === 'special';
  const read = special ? allDocsReader(opened, plan, request.partition) : jsonIndexReader(opened, plan, request.partition);
  let after = request.bookmark === undefined ? undefined : decodeBookmark(request.bookmark, plan.index.signature);
  let skipped = 0;
  const batch = Math.min(MAX_BATCH, Math.max(16, request.skip + request.limit));
  const turns = LoopTurns.until(budget.signal);
  for (;;) {
    await turns.maybeYield();
    const rows = await read(after, batch);
    stats.keysExamined += rows.length;
    stats.docsExamined += rows.length;
    if (stats.docsExamined > budget.maxExamined) throw tooManyExamined(budget.maxExamined);
    for (const row of rows) {
      await turns.maybeYield();
      after = row.position;
      // Design documents are never results: CouchDB's shards examine (and count) them, and its
      // coordinator drops their rows (`handle_all_docs_message`).
      if (special && (row.doc['_id'] as string).startsWith('_design/')) continue;
      const doc = opened.view.listed(row.doc);
      if (!matchesSelector(request.selector, doc)) continue;
      if (skipped < request.skip) {
        skipped++;
        continue;
      }
      found.push({ doc, position: row.position });
      if (found.length === request.limit) return { found, stats };
    }
    if (rows.length < batch) return { found, stats };
  }
}
