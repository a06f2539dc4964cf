/**
 * How a backend cuts one `writeDocuments` call into transactions. A slice is small enough that
 * merging and writing it takes a few milliseconds, so a large `_bulk_docs` never holds the event
 * loop (SQLite writes synchronously) or one transaction for long: between two slices other
 * requests run. Each edit stays atomic and every edit is durable before the call resolves, which
 * is what the storage contract promises (CouchDB's `_bulk_docs` is not atomic either).
 */
import { badRequest } from '../../errors/catalog.js';
import { parseRevision } from '../../revisions/revision-text.js';
import { isValidRevisionPath } from '../../revisions/revision-tree.js';
import type { DocumentEdit, WriteOptions } from '../storage.js';

/** At most this many edits per transaction (about 10 ms of work for small documents). */
const SLICE_EDITS = 250;
/** At most this many revisions of replicated paths per transaction (each is merged and stored). */
const SLICE_REVISIONS = 10_000;

/**
 * Checks every edit's revisions, then cuts `edits` into slices, in order. Malformed revisions refuse
 * the whole request (CouchDB answers 400 before writing anything). An empty list is one empty
 * slice, so the backend still answers for a missing database.
 */
export function sliceEdits(edits: readonly DocumentEdit[], options: WriteOptions): DocumentEdit[][] {
  for (const edit of edits) {
    const valid = options.newEdits
      ? edit.baseRev === undefined || parseRevision(edit.baseRev) !== undefined
      : edit.revPath !== undefined && isValidRevisionPath(edit.revPath);
    if (!valid) throw badRequest('Invalid rev format');
  }
  const slices: DocumentEdit[][] = [];
  let current: DocumentEdit[] = [];
  let revisions = 0;
  for (const edit of edits) {
    const weight = edit.revPath?.length ?? 1;
    if (current.length > 0 && (current.length >= SLICE_EDITS || revisions + weight > SLICE_REVISIONS)) {
      slices.push(current);
      current = [];
      revisions = 0;
    }
    current.push(edit);
    revisions += weight;
  }
  slices.push(current);
  return slices;
}
