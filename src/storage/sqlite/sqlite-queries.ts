/**
 * Reads of single documents of the SQLite backend (ranges: sqlite-range-queries.ts), on the prepared
 * statements of sqlite-statements.ts. Synchronous: the caller runs them between two write batches.
 */
import { describeRevision, listConflicts, parseRevision, revisionPath, selectRevisions, type RevisionTree } from '../revision-tree.js';
import type { DocumentSummary, JsonObject, OpenedRevision, RevisionQuery, StoredRevision } from '../storage.js';
import type { Statements } from './sqlite-statements.js';

/** A revision of a document with its body; undefined when unknown or no longer a leaf. */
export function readRevision(st: Statements, dbId: number, id: string, rev?: string): StoredRevision | undefined {
  const row = rev === undefined ? st.documentWithWinner.get(dbId, id) : st.document.get(dbId, id);
  if (row === undefined) return undefined;
  const tree = JSON.parse(row.tree) as RevisionTree;
  const wanted = rev ?? row.winner;
  if (!Object.hasOwn(tree, wanted)) return undefined;
  // Only leaves keep a body (CouchDB after compaction): an older revision reads as missing.
  const body = rev === undefined ? ((row as { body?: string | null }).body ?? undefined) : st.body.get(row.doc_pk, wanted);
  if (body === undefined) return undefined;
  const parsed = parseRevision(wanted);
  return {
    id: row.id,
    rev: wanted,
    deleted: tree[wanted].deleted,
    body: JSON.parse(body) as JsonObject,
    seq: row.seq,
    revisionPath: revisionPath(tree, wanted).map((r) => r.slice(r.indexOf('-') + 1)),
    revisionStart: parsed?.generation ?? 0,
    ...listConflicts(tree),
  };
}

/** The `_all_docs?keys=` view of one id: deleted documents included, as CouchDB shows them. */
export function summarize(
  st: Statements,
  dbId: number,
  id: string,
  includeDocs: boolean,
): DocumentSummary | undefined {
  const row = st.document.get(dbId, id);
  if (row === undefined) return undefined;
  const summary: DocumentSummary = { id: row.id, rev: row.winner, deleted: row.deleted === 1, seq: row.seq };
  if (includeDocs && row.deleted === 0) {
    const body = st.body.get(row.doc_pk, row.winner);
    if (body !== undefined) summary.body = JSON.parse(body) as JsonObject;
  }
  return summary;
}

/** `open_revs` of one document: the selected leaves with their bodies, then the missing revisions. */
export function openRevisions(st: Statements, dbId: number, query: RevisionQuery): OpenedRevision[] {
  const row = st.document.get(dbId, query.id);
  const tree = row === undefined ? undefined : (JSON.parse(row.tree) as RevisionTree);
  const { found, missing } = selectRevisions(tree, query.revs, query.latest === true);
  const opened: OpenedRevision[] = [];
  if (row !== undefined && tree !== undefined) {
    for (const rev of found) {
      const body = st.body.get(row.doc_pk, rev);
      if (body === undefined) {
        opened.push({ missing: rev });
        continue;
      }
      opened.push({ ok: { id: row.id, rev, body: JSON.parse(body) as JsonObject, seq: row.seq, ...describeRevision(tree, rev) } });
    }
  }
  for (const rev of missing) opened.push({ missing: rev });
  return opened;
}

/** The stored revision tree of one document; undefined when unknown. */
export function revisionTree(st: Statements, dbId: number, id: string): RevisionTree | undefined {
  const row = st.document.get(dbId, id);
  return row === undefined ? undefined : (JSON.parse(row.tree) as RevisionTree);
}
