/**
 * One batch of changes copied from source to target, as a couch_replicator_worker does it: ask the
 * target which revisions it lacks (`_revs_diff`), read those without attachment data from the
 * source (`_bulk_get`) and write them with `_bulk_docs` `new_edits:false`; a revision with
 * attachments the target lacks is read and written on its own as multipart, its attachments
 * streamed (multipart-copy.ts), as is every revision when the source has no `_bulk_get`. A
 * document the target refuses (a validation function's `forbidden`, `unauthorized`) is counted in
 * `doc_write_failures` and the batch goes on; only a failing request fails the batch.
 */
import type { JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { Stats } from './checkpoints.js';
import { copyDocument } from './multipart-copy.js';
import type { ChangeEntry, RemoteDb } from './remote-db.js';

interface BatchEnds {
  source: RemoteDb;
  target: RemoteDb;
  useBulkGet: boolean;
  winningRevsOnly: boolean;
  /** How many documents of a batch are copied as multipart at once. */
  documentsAtOnce: number;
  log: Logger;
}

interface Wanted {
  id: string;
  rev: string;
  atts_since?: string[];
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

/**
 * Whether a revision read without attachment data has an attachment the target may lack: one added
 * after the newest revision of its history the target has (`atts_since`, as the source's own
 * `atts_since` decides which attachments become stubs).
 */
function needsData(doc: JsonObject, since: readonly string[] | undefined): boolean {
  const attachments = doc['_attachments'];
  if (attachments === null || typeof attachments !== 'object' || Array.isArray(attachments)) return false;
  const known = new Set(since ?? []);
  const history = doc['_revisions'] as { start?: unknown; ids?: unknown } | undefined;
  const start = typeof history?.start === 'number' ? history.start : 0;
  const ids = Array.isArray(history?.ids) ? history.ids : [];
  const at = ids.findIndex((hash, i) => known.has(`${start - i}-${String(hash)}`));
  const knownPos = at === -1 ? 0 : start - at;
  return Object.values(attachments).some((att) => {
    const { revpos } = (att ?? {}) as { revpos?: unknown };
    return typeof revpos !== 'number' || revpos > knownPos;
  });
}

/** `_bulk_get` what it serves without attachment data; answers the revisions left for multipart. */
async function readPlain(ends: BatchEnds, wanted: Wanted[], docs: JsonObject[], stats: Stats): Promise<Wanted[]> {
  const found = ends.useBulkGet ? await ends.source.bulkGet(wanted) : undefined;
  if (found === undefined) return wanted;
  stats.bulk_get_attempts += wanted.length;
  const rest: Wanted[] = [];
  found.forEach((revisions, i) => {
    const asked = wanted[i]!;
    if (revisions === undefined || revisions.some((doc) => needsData(doc, asked.atts_since))) return void rest.push(asked);
    docs.push(...revisions);
    stats.bulk_get_docs += 1;
    stats.docs_read += revisions.length;
  });
  return rest;
}

/** Copies what the target lacks of `changes`, adding to `stats`. */
export async function copyBatch(ends: BatchEnds, changes: readonly ChangeEntry[], stats: Stats): Promise<void> {
  if (changes.length === 0) return;
  const revs = revisionsOf(changes, ends.winningRevsOnly);
  stats.missing_checked += Object.values(revs).reduce((sum, list) => sum + list.length, 0);
  const diff = await ends.target.revsDiff(revs);
  const wanted: Wanted[] = Object.entries(diff).flatMap(([id, entry]) =>
    (entry.missing ?? []).map((rev) => ({ id, rev, ...(entry.possible_ancestors?.length ? { atts_since: entry.possible_ancestors } : {}) })),
  );
  stats.missing_found += wanted.length;
  if (wanted.length === 0) return;
  const docs: JsonObject[] = [];
  const rest = await readPlain(ends, wanted, docs, stats);
  const refused: JsonObject[] = [];
  const queue = [...groupById(rest)];
  // A few documents at a time: each holds only a few network chunks, and the target's group commit
  // makes concurrent single-document writes share their fsyncs.
  const copier = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const [id, items] = next;
      const copied = await ends.source.client.retrying(() => copyDocument(ends.source.client, ends.target.client, id, items.map((item) => item.rev), items[0]!.atts_since));
      docs.push(...copied.docs);
      refused.push(...copied.refused);
      stats.docs_read += copied.read;
      stats.docs_written += copied.written;
    }
  };
  await Promise.all(Array.from({ length: Math.min(ends.documentsAtOnce, queue.length) }, copier));
  const rows = docs.length > 0 ? await ends.target.write(docs) : [];
  refused.push(...rows);
  for (const row of refused) {
    ends.log.notice(`replicator: ${ends.target.url} refused ${JSON.stringify(row['id'])}: ${String(row['error'])}`);
  }
  stats.doc_write_failures += refused.length;
  stats.docs_written += docs.length - rows.length;
}

function groupById(wanted: readonly Wanted[]): Map<string, Wanted[]> {
  const byId = new Map<string, Wanted[]>();
  for (const item of wanted) byId.set(item.id, [...(byId.get(item.id) ?? []), item]);
  return byId;
}
