/**
 * How both backends turn what they store into the values of the Storage interface. Their tables
 * have the same columns (sqlite/sqlite-schema.ts, postgres/postgres-schema.ts): a document row keeps
 * its revision tree and winner as text; a revision keeps its body until it is no longer a leaf and
 * the database is compacted (as in CouchDB), then it reads as missing. Only the SQL differs between
 * the backends; the decoding below is one.
 */
import {
  describeRevision,
  leavesFrom,
  leavesOf,
  listConflicts,
  revisionPath,
  selectRevisions,
  sortedLeaves,
  type RevisionTree,
} from '../../revisions/revision-tree.js';
import type {
  ChangeRow,
  DatabaseInfo,
  DatabaseSizes,
  DocumentSummary,
  JsonObject,
  OpenedRevision,
  ReadOptions,
  RevisionInfo,
  RevisionQuery,
  StoredRevision,
} from '../storage.js';

/** A row of the `databases` table. */
export interface DatabaseRow {
  db_id: number;
  name: string;
  security: string;
  update_seq: number;
  doc_count: number;
  deleted_doc_count: number;
  data_size: number;
  compactable_size: number;
  instance_start_time: string;
  revs_limit: number;
  purged_infos_limit: number;
  purge_seq: number;
}

let lastInstanceStart = 0;

/**
 * Microseconds since the epoch, as CouchDB's `instance_start_time` (wall clock, ms precision), and
 * never twice the same in a process: update sequences name the instance (databases/sequences.ts), so
 * a database deleted and created again within a millisecond must not take its predecessor's.
 */
export function instanceStartTime(): string {
  lastInstanceStart = Math.max(Date.now() * 1000, lastInstanceStart + 1);
  return String(lastInstanceStart);
}

/** The byte counts `storedSizeColumns` adds to a `databases` row. */
interface StoredSizes {
  tree_bytes: number | string;
  local_bytes: number | string;
  live_attachment_bytes: number | string;
  attachment_bytes: number | string;
  purge_bytes: number | string;
}

/**
 * Columns of a database's stored sizes, for a SELECT over `databases` aliased `t`: `bytes` is the
 * dialect's byte length of a text column, `leaf` its test of `revision_bodies.leaf` (aliased `v`).
 * Each is an indexed scan of the database's own rows. An attachment is live while a leaf's body
 * names it: a deleted document's attachment waits, named by a superseded body, for compaction.
 */
export function storedSizeColumns(bytes: (column: string) => string, leaf: string): string {
  const sum = (expression: string, table: string, where = ''): string => `(SELECT coalesce(sum(${expression}), 0) FROM ${table} WHERE db_id = t.db_id${where})`;
  const named = `SELECT r.digest FROM documents d JOIN revision_bodies v ON v.doc_pk = d.doc_pk AND ${leaf}
    JOIN attachment_refs r ON r.doc_pk = v.doc_pk AND r.rev = v.rev WHERE d.db_id = t.db_id`;
  return [
    `${sum(`${bytes('id')} + ${bytes('tree')} + ${bytes('winner')}`, 'documents')} AS tree_bytes`,
    `${sum(`${bytes('id')} + ${bytes('body')}`, 'local_documents')} AS local_bytes`,
    `${sum('length', 'attachment_blobs', ` AND digest IN (${named})`)} AS live_attachment_bytes`,
    `${sum('length', 'attachment_blobs')} AS attachment_bytes`,
    `${sum(`${bytes('id')} + ${bytes('revs')}`, 'purged_infos')} AS purge_bytes`,
  ].join(', ');
}

function sizesOf(row: Pick<DatabaseRow, 'data_size' | 'compactable_size'> & StoredSizes): DatabaseSizes {
  const active = Number(row.data_size) + Number(row.tree_bytes) + Number(row.local_bytes) + Number(row.live_attachment_bytes);
  const reclaimable = Number(row.compactable_size) + Number(row.attachment_bytes) - Number(row.live_attachment_bytes) + Number(row.purge_bytes);
  return { file: active + reclaimable, active, external: Number(row.data_size) };
}

/** A `databases` row as `DatabaseInfo`, with `sizes` when the row carries `storedSizeColumns`. */
export function databaseInfo(row: Omit<DatabaseRow, 'db_id' | 'security'> & Partial<StoredSizes>): DatabaseInfo {
  return {
    ...(row.tree_bytes === undefined ? {} : { sizes: sizesOf(row as DatabaseRow & StoredSizes) }),
    name: row.name,
    docCount: row.doc_count,
    deletedDocCount: row.deleted_doc_count,
    updateSeq: row.update_seq,
    dataSize: row.data_size,
    compactableSize: row.compactable_size,
    instanceStartTime: row.instance_start_time,
    revsLimit: row.revs_limit,
    purgedInfosLimit: row.purged_infos_limit,
    purgeSeq: Number(row.purge_seq),
  };
}

/** The part of a document row every read needs. */
export interface DocumentCore {
  id: string;
  /** The revision tree's JSON. */
  tree: string;
  seq: number;
}

/**
 * The revision `options` asks for (default: the winner, `winner`), given how to read a revision's
 * body (null or undefined when it has none) and, for `revsInfo`, which revisions still have one;
 * undefined when the tree does not know the revision or its body is gone.
 */
export function storedRevision(
  row: DocumentCore & { winner: string },
  options: ReadOptions,
  bodyOf: (rev: string) => string | null | undefined,
  revsWithBody: () => ReadonlySet<string> = () => new Set(),
): StoredRevision | undefined {
  const tree = JSON.parse(row.tree) as RevisionTree;
  let rev = options.rev ?? row.winner;
  if (!Object.hasOwn(tree, rev)) return undefined;
  if (options.latest === true && !leavesOf(tree).has(rev)) rev = leavesFrom(tree, rev)[0] ?? rev;
  const body = bodyOf(rev);
  if (body === null || body === undefined) return undefined;
  const { deleted, ...history } = describeRevision(tree, rev);
  const stored: StoredRevision = { id: row.id, rev, deleted, body: JSON.parse(body) as JsonObject, seq: row.seq, ...history };
  if (options.revsInfo === true) stored.revsInfo = revisionsInfo(tree, rev, revsWithBody());
  return stored;
}

/** CouchDB's `_revs_info`: `rev` and its ancestors, newest first, each with its body's status. */
function revisionsInfo(tree: RevisionTree, rev: string, withBody: ReadonlySet<string>): RevisionInfo[] {
  return revisionPath(tree, rev).map((ancestor) => ({
    rev: ancestor,
    status: !withBody.has(ancestor) ? 'missing' : tree[ancestor].deleted ? 'deleted' : 'available',
  }));
}

/** `open_revs` of one document: the selected revisions with their bodies, then the missing ones. */
export function openedRevisions(
  row: DocumentCore | undefined,
  query: RevisionQuery,
  bodyOf: (rev: string) => string | null | undefined,
): OpenedRevision[] {
  const tree = row === undefined ? undefined : (JSON.parse(row.tree) as RevisionTree);
  const { found, missing } = selectRevisions(tree, query.revs, query.latest === true);
  const opened: OpenedRevision[] = [];
  if (row !== undefined && tree !== undefined) {
    for (const rev of found) {
      const body = bodyOf(rev);
      opened.push(
        body === null || body === undefined
          ? { missing: rev }
          : { ok: { id: row.id, rev, body: JSON.parse(body) as JsonObject, seq: row.seq, ...describeRevision(tree, rev) } },
      );
    }
  }
  for (const rev of missing) opened.push({ missing: rev });
  return opened;
}

/** An `_all_docs` row; `body` is the winner's, when it was asked for and the winner is live. */
export function documentSummary(row: { id: string; winner: string; deleted: boolean; seq: number }, body: string | null | undefined): DocumentSummary {
  const summary: DocumentSummary = { id: row.id, rev: row.winner, deleted: row.deleted, seq: row.seq };
  if (typeof body === 'string') summary.body = JSON.parse(body) as JsonObject;
  return summary;
}

/** A `_changes` query's row before decoding: `tree` when leaves or conflicts are asked, `body` with docs. */
interface ChangeRecord {
  id: string;
  winner: string;
  deleted: boolean;
  seq: number;
  tree?: string | null;
  body?: string | null;
}

/** A `_changes` row: the winner, or every leaf with `allLeaves`; conflicts when asked. */
export function changeRow(record: ChangeRecord, options: { allLeaves: boolean; conflicts: boolean; bodyText?: boolean | undefined }): ChangeRow {
  const tree = options.allLeaves || options.conflicts ? (JSON.parse(record.tree as string) as RevisionTree) : undefined;
  const row: ChangeRow = {
    seq: record.seq,
    id: record.id,
    changes: options.allLeaves ? sortedLeaves(tree as RevisionTree) : [record.winner],
    deleted: record.deleted,
  };
  // A deleted winner's tombstone body is included too: CouchDB shows `{_id, _rev, _deleted}`.
  if (typeof record.body === 'string') {
    if (options.bodyText === true) row.bodyText = record.body;
    else row.body = JSON.parse(record.body) as JsonObject;
  }
  if (options.conflicts) row.conflicts = listConflicts(tree as RevisionTree).conflicts;
  return row;
}
