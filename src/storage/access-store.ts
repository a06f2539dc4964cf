/**
 * Per-principal orders of the documents (CouchDB RFC 010's `by-access-id` and `by-access-seq`):
 * every backend keeps, in the same transaction as the write, one row (principal, id, seq) per
 * principal named by the `_access` member of each document's winning revision, and one row under
 * `DESIGN_PRINCIPAL` for each design document. A caller's listing then reads their rows, so it costs
 * their documents, not the database's. The rows are kept for every database; only databases with
 * per-document access read them.
 */
import type { ChangeRow, ChangesOptions, RangeOptions, RangeResult } from './storage-reads.js';

/**
 * The principal under which design documents are listed: every member reads them. No user name or
 * role is empty (`principalsOfCaller` drops an empty role), so it names nobody else's documents.
 */
export const DESIGN_PRINCIPAL = '';

/** What a caller's own rows say about a database. */
export interface AccessStats {
  /** Their documents whose winning revision is not deleted (design documents included). */
  docCount: number;
  deletedDocCount: number;
  /** The latest sequence among their rows (0 when none). */
  updateSeq: number;
  /** Their rows after `after` (`pending` of `_changes`). */
  pendingAfter: number;
}

export interface AccessStore {
  /** `_all_docs` over the live documents any of `principals` may read, as `Storage.listDocuments`. */
  listDocuments(db: string, principals: readonly string[], options: RangeOptions): Promise<RangeResult>;
  /** `_changes` over the documents any of `principals` may read, as `Storage.changes`. */
  changes(db: string, principals: readonly string[], options: ChangesOptions): Promise<ChangeRow[]>;
  /** Counts over the rows of `principals`; `pendingAfter` counts those after sequence `after`. */
  stats(db: string, principals: readonly string[], after: number): Promise<AccessStats>;
}
