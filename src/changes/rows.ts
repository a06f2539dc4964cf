import type { ChangeRow } from '../databases/types.js';
import type { Json, JsonObject } from '../json/json.js';
import type { FeedArgs } from './feed.js';

export function render(change: ChangeRow, revs: readonly string[], args: FeedArgs): JsonObject {
  const entry: JsonObject = { seq: args.sequences.format(change.seq), id: change.id, changes: revs.map((rev) => ({ rev })) };
  if (change.deleted) entry['deleted'] = true;
  if (args.includeDocs) entry['doc'] = change.body ? args.opened.listedView(args.attachments, args.attEncodingInfo === true).listed(fullDocument(change)) : null;
  return entry;
}

export function fullDocument(change: ChangeRow): JsonObject {
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
export async function leafDocuments(args: FeedArgs, rows: readonly ChangeRow[], withDeleted: boolean): Promise<(JsonObject | undefined)[][]> {
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
