import type { ChangeRow } from '../databases/types.js';
import { matchesSelector } from '../documents/selector.js';
import { passingFilter } from '../design/filter-function.js';
import type { JsonObject } from '../json/json.js';
import type { LoopTurns } from '../turns/loop-turns.js';
import type { FeedArgs, Filter } from './feed.js';
import { fullDocument, leafDocuments, render } from './rows.js';

/** A filter function over every leaf document at once; undefined (a document the caller may not see) never passes. */
async function functionPasses(db: string, filter: Extract<Filter, { kind: 'function' }>, docs: (JsonObject | undefined)[][]): Promise<boolean[][]> {
  const passes = await passingFilter(filter, db, docs.flat().filter((doc): doc is JsonObject => doc !== undefined));
  let next = 0;
  return docs.map((list) => list.map((doc) => doc !== undefined && passes[next++]!));
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
