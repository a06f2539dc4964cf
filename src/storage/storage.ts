/**
 * The Storage interface: everything Divan keeps on disk goes through it. Each backend folder
 * (sqlite/, postgres/) implements it and one contract suite (test/storage/) runs unchanged over all.
 *
 * Revision semantics live here, not in the HTTP layer: a backend receives edits, merges them into the
 * document's revision tree with the shared pure functions of `src/revisions/`, and answers per edit.
 * Every method that writes resolves only after the write is durable.
 */

import { DEFAULTS } from '../config/defaults.js';
import type { JsonObject } from '../json/json.js';
import type { HitCounts } from '../metrics/hit-counts.js';
import type { PurgeRequest } from '../revisions/purge-plan.js';
import type { AttachmentStore } from './attachment-store.js';
import type { RevisionTree } from '../revisions/revision-tree.js';
import type { DocumentLimits } from '../revisions/tree-editor.js';
import type { IndexStore } from './index-store.js';
import type { ViewStore } from './view-store.js';
import type { SearchStore } from './search-store.js';
import type { AccessStore } from './access-store.js';

export type { ByteRange, SavedAttachment } from './attachment-store.js';
export type { Json, JsonObject } from '../json/json.js';
export type { RevisionTree } from '../revisions/revision-tree.js';
export type { DocumentLimits } from '../revisions/tree-editor.js';
export type { IndexPosition, IndexUpdate } from './index-store.js';
export type { PurgeRequest } from '../revisions/purge-plan.js';
export type * from './view-store.js';
export type * from './search-store.js';

/** `_security` of a database: `admins` and `members`, each with `names` and `roles`. */
export type SecurityObject = JsonObject;

export interface DatabaseInfo {
  name: string;
  /** Number of documents whose winning revision is not deleted (design documents included). */
  docCount: number;
  /** Number of documents whose winning revision is a tombstone. */
  deletedDocCount: number;
  /** Monotonic per-database sequence; 0 for an empty database. */
  updateSeq: number;
  /** Approximate bytes of the leaf revisions' JSON bodies (for `sizes.external`/`sizes.active`). */
  dataSize: number;
  /**
   * Bytes of bodies kept for revisions that are no longer leaves: readable by `?rev=` until
   * `compact` reclaims them (`sizes.file` counts them on top of `dataSize`).
   */
  compactableSize: number;
  /** Microseconds since the epoch at creation, as CouchDB's `instance_start_time` is a string. */
  instanceStartTime: string;
  /** `_revs_limit`: revisions kept above every leaf when a document is written (default 1000). */
  revsLimit: number;
  /** `_purged_infos_limit`: purge requests remembered (default 1000). */
  purgedInfosLimit: number;
  /** Purge requests applied so far (`purge_seq`). */
  purgeSeq: number;
  /** What the database takes, when asked for (`databaseInfo(name, { sizes: true })`: it reads every document's row). */
  sizes?: DatabaseSizes;
}

/**
 * CouchDB's `sizes` of `GET /{db}`, over the records the database keeps in the backend's tables
 * (one SQLite file or PostgreSQL schema holds every database): `external` the JSON of the leaf
 * revisions' bodies; `active` that plus the documents' ids and revision trees, the `_local`
 * documents and the attachments the leaves name; `file` that plus what compaction reclaims (the
 * bodies of superseded revisions, attachments no revision names) and the purge history.
 */
export interface DatabaseSizes {
  file: number;
  active: number;
  external: number;
}

/** One edit of one document, as a client sent it (after the HTTP layer split off the `_` fields). */
export interface DocumentEdit {
  id: string;
  /** The document's own fields: no `_id`, `_rev`, `_deleted`, `_revisions`. */
  body: JsonObject;
  deleted: boolean;
  /**
   * new_edits=true: the revision being edited (`_rev`), undefined to create (or to recreate a
   * deleted document).
   */
  baseRev?: string;
  /**
   * new_edits=false (replication): the revision path of this edit, newest first, as full revs
   * (`["3-c…","2-b…","1-a…"]`). Required in that mode.
   */
  revPath?: string[];
}

export type EditResult =
  | { ok: true; id: string; rev: string }
  | { ok: false; id: string; error: 'conflict'; reason: 'Document update conflict.' }
  /** A replicated revision that would take the document past `WriteOptions.limits`. */
  | { ok: false; id: string; error: 'too_large'; reason: string };

/** The `conflict` answer to an edit that does not name the current revision. */
export function documentConflict(id: string): EditResult {
  return { ok: false, id, error: 'conflict', reason: 'Document update conflict.' };
}

export interface WriteOptions {
  /** false: replication mode, the edit's `revPath` is merged as-is and never conflicts. */
  newEdits: boolean;
  /**
   * `[couchdb] max_document_leaves` and `max_document_revisions`: a new_edits=false edit that would
   * take its document past them is refused (`too_large`). Default `DEFAULT_DOCUMENT_LIMITS`.
   */
  limits?: DocumentLimits;
}

/**
 * Defaults of `[couchdb] max_document_leaves` and `max_document_revisions`: as many leaves as
 * CouchDB's default `revs_limit` keeps ancestors, and ten full-length histories in all.
 */
export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = { maxLeaves: DEFAULTS.couchdb.max_document_leaves, maxRevisions: DEFAULTS.couchdb.max_document_revisions };

export type { StoredRevision, RevisionInfo, ReadOptions, DocumentSummary, RangeOptions, RangeResult, IdRangeStats, ChangeRow, ChangesOptions, RevisionQuery, OpenedRevision, LocalDocument } from './storage-reads.js';
import type { StoredRevision, ReadOptions, DocumentSummary, RangeOptions, RangeResult, IdRangeStats, ChangeRow, ChangesOptions, RevisionQuery, OpenedRevision, LocalDocument } from './storage-reads.js';

export interface Storage {
  /** `sqlite` or `postgres`: for logs and `GET /_up`. */
  readonly kind: string;
  /** Hits and misses of the backend's cache of winning revisions, when it keeps one (metrics). */
  readonly readCache?: HitCounts;
  /** Attachment data; revision bodies name it by digest (attachment-store.ts). */
  readonly attachments: AttachmentStore;
  /** Map/reduce view indexes (view-store.ts); dropped with their database. */
  readonly views: ViewStore;
  /** Full-text search indexes (search-store.ts); dropped with their database. */
  readonly search: SearchStore;
  /** Per-principal orders of the documents (access-store.ts), kept by every write. */
  readonly access: AccessStore;

  /**
   * Something from outside this process arrived (a request, a message from a sibling worker): what
   * another process committed before it must be visible to the reads that follow. A backend that
   * caches (SQLite) checks for other processes' commits before the next read; others ignore it.
   */
  outsideEvent?(): void;
  /** Closes connections after pending writes have been committed. */
  close(): Promise<void>;
  /** Resolves when the backend can serve (used by `GET /_up`); rejects otherwise. */
  ping(): Promise<void>;
  /** Rows of Mango json indexes (index-store.ts); dropped with their database. */
  readonly indexes: IndexStore;

  /** Creates a database with its initial `_security`; false when it already exists. */
  createDatabase(name: string, security: SecurityObject): Promise<boolean>;
  /** Deletes a database and everything in it; false when it did not exist. */
  deleteDatabase(name: string): Promise<boolean>;
  /** Database names in ascending (byte) order. */
  listDatabases(): Promise<string[]>;
  databaseInfo(name: string, options?: { sizes?: boolean }): Promise<DatabaseInfo | undefined>;

  /** undefined when the database does not exist. */
  getSecurity(db: string): Promise<SecurityObject | undefined>;
  /** false when the database does not exist. */
  putSecurity(db: string, security: SecurityObject): Promise<boolean>;

  /**
   * Applies edits in order, atomically per edit, durable before it resolves. Two edits of the same
   * id in one call are applied one after the other (the second sees the first).
   * Rejects with a not-found CouchError when the database does not exist.
   */
  writeDocuments(db: string, edits: DocumentEdit[], options: WriteOptions): Promise<EditResult[]>;
  /**
   * undefined when the document (or the asked revision) does not exist. A deleted winner is
   * returned with `deleted: true` so the caller can answer `deleted` rather than `missing`.
   */
  readDocument(db: string, id: string, options?: ReadOptions): Promise<StoredRevision | undefined>;
  /** `_all_docs` over document ids in byte order; `keys` variant below. */
  listDocuments(db: string, options: RangeOptions): Promise<RangeResult>;
  /** Counts and sizes of the documents with ids from `startKey` (included) to `endKey` (excluded); rejects (404) for a missing database. */
  idRangeStats(db: string, startKey: string, endKey: string): Promise<IdRangeStats>;
  /** Summaries for the given ids, in the given order; undefined for unknown ids. */
  lookupDocuments(
    db: string,
    ids: readonly string[],
    includeDocs: boolean,
  ): Promise<(DocumentSummary | undefined)[]>;
  /** One row per document, at its latest change, in sequence order. */
  changes(db: string, options: ChangesOptions): Promise<ChangeRow[]>;
  /**
   * `open_revs` for several documents in one read (one snapshot where the backend has them), one
   * list per query: the opened leaves (see `selectRevisions` in revision-tree.ts), then the missing
   * revisions. An unknown id gives `[]` for `all` and every asked revision as missing otherwise.
   * Rejects with a not-found CouchError when the database does not exist.
   */
  openRevisions(db: string, queries: readonly RevisionQuery[]): Promise<OpenedRevision[][]>;
  /** The revision trees of the given ids, in order (`_revs_diff`); undefined for unknown ids. */
  revisionTrees(db: string, ids: readonly string[]): Promise<(RevisionTree | undefined)[]>;

  getLocal(db: string, id: string): Promise<LocalDocument | undefined>;
  /** Every `_local/…` document of a database, in id byte order (`_local_docs`; they are few: checkpoints). */
  listLocal(db: string): Promise<LocalDocument[]>;
  /**
   * Writes `_local/…` documents: `rev` must match the stored one (or be absent for a new one),
   * otherwise `conflict`. Local documents have no history, no sequence and are not replicated.
   */
  putLocal(db: string, id: string, body: JsonObject, rev: string | undefined): Promise<EditResult>;
  deleteLocal(db: string, id: string, rev: string | undefined): Promise<EditResult>;

  /**
   * `POST /{db}/_purge`: removes the asked leaf revisions (and the ancestors only they needed) of
   * each document, for good (purge-plan.ts); per request, in order, the revisions purged.
   * Rejects with a not-found CouchError when the database does not exist.
   */
  purgeDocuments(db: string, requests: readonly PurgeRequest[]): Promise<string[][]>;
  /** The purges remembered (`_purged_infos_limit` of them), oldest first; rejects (404) for a missing database. */
  purgedInfos(db: string): Promise<PurgeRequest[]>;
  /** Sets `_revs_limit` or `_purged_infos_limit` of a database; false when it does not exist. */
  setDatabaseLimit(db: string, limit: DatabaseLimit, value: number): Promise<boolean>;

  /**
   * Stems every document's revision tree to the database's `_revs_limit`, then reclaims the bodies
   * of revisions that are no longer leaves (CouchDB's compaction), in slices of one transaction each
   * so that writes and reads go on in between; leaves are never touched. Then
   * removes the attachment data no body has named for `UNREFERENCED_GRACE_MS`.
   * Resolves with the bytes reclaimed. Rejects with a not-found CouchError when the database does
   * not exist (or is deleted meanwhile).
   */
  compact(db: string, options?: CompactOptions): Promise<number>;
}

export interface CompactOptions {
  /** How long unreferenced attachment data is kept (default `UNREFERENCED_GRACE_MS`). */
  graceMs?: number;
}

/** The per-database settings `setDatabaseLimit` changes. */
export type DatabaseLimit = 'revs_limit' | 'purged_infos_limit';

