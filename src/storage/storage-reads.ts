/**
 * What the Storage interface's read methods answer and take (storage.ts re-exports every name):
 * revisions, document summaries, ranges, change rows, local documents.
 */
import type { JsonObject } from '../json/json.js';

/** A document revision read back from storage. */
export interface StoredRevision {
  id: string;
  rev: string;
  deleted: boolean;
  body: JsonObject;
  /** Update sequence of the document (its latest change). */
  seq: number;
  /** Ancestors of `rev`, newest first, starting with `rev` itself, as hashes without the `N-`. */
  revisionPath: string[];
  /** Start (generation) of `rev`. */
  revisionStart: number;
  /** Live non-winning leaf revisions, sorted as CouchDB sorts them (winner order). */
  conflicts: string[];
  /** Deleted non-winning leaf revisions. */
  deletedConflicts: string[];
  /** Present when `ReadOptions.revsInfo` asked for it: `revisionPath` with each revision's status. */
  revsInfo?: RevisionInfo[];
}

/** CouchDB's `_revs_info` entry: `missing` once a revision's body is gone (compacted, or never replicated). */
export interface RevisionInfo {
  rev: string;
  status: 'available' | 'deleted' | 'missing';
}

export interface ReadOptions {
  /** A specific revision (a leaf, or an older one whose body is still kept); default: the winner. */
  rev?: string;
  /** With `rev`: when it is no longer a leaf, read the first leaf (winner order) descending from it. */
  latest?: boolean;
  /** Fill `StoredRevision.revsInfo`. */
  revsInfo?: boolean;
}

/** Row of `_all_docs` before the HTTP layer shapes it. */
export interface DocumentSummary {
  id: string;
  /** Winning revision. */
  rev: string;
  deleted: boolean;
  seq: number;
  /** Present when `includeDocs` was asked for and the document is not deleted. */
  body?: JsonObject;
}

export interface RangeOptions {
  startKey?: string;
  endKey?: string;
  /** Default true, as CouchDB's `inclusive_end`. */
  inclusiveEnd?: boolean;
  descending?: boolean;
  limit?: number;
  skip?: number;
  includeDocs?: boolean;
  /** false: `offset` is not counted (0), so a scan in pages does not count its way through the database. Default true. */
  countOffset?: boolean;
  /** Ids starting with `_local/` are never listed; `_design/` ones are. */
}

/** The documents of one id range (a partition: `p:` up to `p;`), as `GET /{db}/_partition/{p}` shows them. */
export interface IdRangeStats {
  /** Documents whose winning revision is not deleted. */
  docCount: number;
  deletedDocCount: number;
  /** Bytes of the leaf revisions' JSON bodies. */
  dataSize: number;
}

export interface RangeResult {
  totalRows: number;
  offset: number;
  rows: DocumentSummary[];
}

export interface ChangeRow {
  seq: number;
  id: string;
  /** Winning revision first, then other leaves when `style=all_docs`. */
  changes: string[];
  deleted: boolean;
  body?: JsonObject;
  /** The body as stored (JSON text, without `_id` and `_rev`), in place of `body` when `bodyText` was asked for. */
  bodyText?: string;
  /** Live non-winning leaves (winner order), present when `conflicts` was asked for. */
  conflicts?: string[];
}

export interface ChangesOptions {
  /** Exclusive lower bound. */
  since?: number;
  limit?: number;
  descending?: boolean;
  includeDocs?: boolean;
  /** With `includeDocs`: bodies as their stored JSON text (`ChangeRow.bodyText`), for a reader that only passes them on. */
  bodyText?: boolean;
  allLeaves?: boolean;
  /** Fill `ChangeRow.conflicts`. */
  conflicts?: boolean;
  /** Only these document ids (the `_doc_ids` filter); `limit` counts matching rows. */
  ids?: readonly string[];
}

/** One document of an `open_revs` / `_bulk_get` request. */
export interface RevisionQuery {
  id: string;
  /** `all`: every leaf; otherwise these revisions. */
  revs: 'all' | readonly string[];
  /** An asked revision that is no longer a leaf opens the leaves that descend from it. */
  latest?: boolean;
}

/** One answer of `openRevisions`: the revision with its body, or a revision that cannot be opened. */
export type OpenedRevision = { ok: StoredRevision } | { missing: string };

export interface LocalDocument {
  id: string;
  /** `0-N` as CouchDB numbers local revisions. */
  rev: string;
  body: JsonObject;
}
