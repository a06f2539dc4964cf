/**
 * One batch of changes copied from source to target, as a couch_replicator_worker does it: ask the
 * target which revisions it lacks (`_revs_diff`), read those from the source with their history
 * and attachments (`_bulk_get`), write them with `new_edits:false`. A document the target refuses
 * (a validation function's `forbidden`, `unauthorized`) is counted in `doc_write_failures` and the
 * batch goes on; only a failing request fails the batch.
 */
import type { JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { Stats } from './checkpoints.js';
import type { ChangeEntry, RemoteDb } from './remote-db.js';

export interface BatchEnds {
  source: RemoteDb;
  target: RemoteDb;
  useBulkGet: boolean;
  winningRevsOnly: boolean;
  log: Logger;
}

/** Revisions of each changed document, all leaves unless only winners are replicated. */
function revisionsOf(changes: readonly ChangeEntry[], winningOnly: boolean): Record<string, string[]> {
  const revs: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const change of changes) {
    const listed = change.changes.map((entry) => entry.rev);
    const wanted = winningOnly ? listed.slice(0, 1) : listed;
    revs[change.id] = [...new Set([...(revs[change.id] ?? []), ...wanted])];
  }
  return revs;
}

/** Copies what the target lacks of `changes`, adding to `stats`. */
export async function copyBatch(ends: BatchEnds, changes: readonly ChangeEntry[], stats: Stats): Promise<void> {
  if (changes.length === 0) return;
  const revs = revisionsOf(changes, ends.winningRevsOnly);
  stats.missing_checked += Object.values(revs).reduce((sum, list) => sum + list.length, 0);
  const diff = await ends.target.revsDiff(revs);
  // Attachments the target has in an ancestor come back as stubs (`atts_since`, as CouchDB's replicator asks).
  const wanted = Object.entries(diff).flatMap(([id, entry]) =>
    (entry.missing ?? []).map((rev) => ({ id, rev, ...(entry.possible_ancestors?.length ? { atts_since: entry.possible_ancestors } : {}) })),
  );
  stats.missing_found += wanted.length;
  if (wanted.length === 0) return;
  const fetched = await ends.source.fetch(wanted, ends.useBulkGet);
  stats.bulk_get_docs += fetched.bulkGetDocs;
  if (fetched.bulkGetDocs > 0) stats.bulk_get_attempts += fetched.bulkGetDocs;
  stats.docs_read += fetched.docs.length;
  const docs: JsonObject[] = fetched.docs.map((item) => item.doc);
  const refused = await ends.target.write(docs);
  for (const row of refused) {
    ends.log.notice(`replicator: ${ends.target.url} refused ${JSON.stringify(row['id'])}: ${String(row['error'])}`);
  }
  stats.doc_write_failures += refused.length;
  stats.docs_written += docs.length - refused.length;
}
