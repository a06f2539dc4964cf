/**
 * Reads of single documents of the SQLite backend (ranges: sqlite-range-queries.ts), on the prepared
 * statements of sqlite-statements.ts. Synchronous: the caller runs them between two write batches.
 */
import type { RevisionTree } from '../../revisions/revision-tree.js';
import type { DocumentSummary, OpenedRevision, ReadOptions, RevisionQuery, StoredRevision } from '../storage.js';
import { documentSummary, openedRevisions, storedRevision } from '../kit/stored-rows.js';
import type { Statements } from './sqlite-statements.js';

/** The revision `options` asks for, with its body (default: the winner); undefined when unknown or compacted. */
export function readRevision(st: Statements, dbId: number, id: string, options: ReadOptions = {}): StoredRevision | undefined {
  if (options.rev === undefined && options.revsInfo !== true) {
    const row = st.documentWithWinner.get(dbId, id);
    return row === undefined ? undefined : storedRevision(row, {}, () => row.body);
  }
  const row = st.document.get(dbId, id);
  if (row === undefined) return undefined;
  return storedRevision(
    row,
    options,
    (rev) => st.body.get(row.doc_pk, rev),
    () => new Set(st.bodyRevs.all(row.doc_pk)),
  );
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
  const deleted = row.deleted === 1;
  const body = includeDocs && !deleted ? st.body.get(row.doc_pk, row.winner) : undefined;
  return documentSummary({ ...row, deleted }, body);
}

/** `open_revs` of one document: the selected leaves with their bodies, then the missing revisions. */
export function openRevisions(st: Statements, dbId: number, query: RevisionQuery): OpenedRevision[] {
  const row = st.document.get(dbId, query.id);
  return openedRevisions(row, query, (rev) => (row === undefined ? undefined : st.body.get(row.doc_pk, rev)));
}

/** The stored revision tree of one document; undefined when unknown. */
export function revisionTree(st: Statements, dbId: number, id: string): RevisionTree | undefined {
  const row = st.document.get(dbId, id);
  return row === undefined ? undefined : (JSON.parse(row.tree) as RevisionTree);
}
