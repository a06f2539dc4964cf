import { LoopTurns } from '../turns/loop-turns.js';
import type { JsonObject } from '../json/json.js';
import { filterReadsDocs, type FeedArgs } from './feed.js';
import { filterRows } from './filters.js';

/** Rows read from storage per query; live feeds stream them batch by batch. */
const BATCH = 1000;

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
  const opened = args.opened;
  return opened.pendingAfter(last, async () => (await opened.storage.databaseInfo(opened.db))?.updateSeq ?? 0);
}
