import { mergeBatch, type MergedBatch, type QueuedEdit } from '../kit/batch-merge.js';
import { accessRowsOf } from '../kit/access-rows.js';
import { countIdChanges, liveDelta } from '../kit/id-blocks.js';
import { idBlockStore } from './sqlite-id-blocks.js';
import { REVS_LIMIT } from '../../revisions/revision-tree.js';
import type { EditResult } from '../storage.js';
import { stemmedTree, type ReclaimedSlice, type StemmedSlice } from '../kit/compaction-slices.js';
import { countReferences, releaseReferences } from './sqlite-attachments.js';
import type { Statements } from './sqlite-statements.js';

/**
 * Applies a batch of edits of one database inside the caller's transaction: merges them in memory
 * (see batch-merge.ts), then writes each changed document once. Bodies of revisions that stop
 * being leaves are marked superseded, not deleted: they stay readable until compaction.
 * Each changed edit takes its own update sequence; a document ends at the sequence of its latest
 * change.
 */
export function writeEdits(st: Statements, dbId: number, edits: readonly QueuedEdit[]): EditResult[] {
  const batch = mergeBatch(
    edits,
    (id) => {
      const row = st.document.get(dbId, id);
      return row === undefined ? undefined : { docPk: row.doc_pk, tree: row.tree, deleted: row.deleted === 1 };
    },
    st.revsLimit.get(dbId) ?? REVS_LIMIT,
  );
  if (batch.changes === 0) return batch.results;

  let superseded = 0;
  for (const { docPk, rev } of batch.obsolete) superseded += st.supersedeBody.get(docPk, rev) ?? 0;
  const sizeDelta = batch.addedBytes - superseded;
  const compactableDelta = superseded + batch.supersededBytes;
  const lastSeq = st.addChanges.get(batch.changes, batch.liveDelta, batch.deletedDelta, sizeDelta, compactableDelta, dbId) as number;
  const firstSeq = lastSeq - batch.changes + 1;
  writeDocuments(st, dbId, batch, firstSeq);
  const changes = batch.documents.map((doc) => ({ id: doc.id, delta: liveDelta(doc.storedDeleted === false, !doc.deleted) }));
  countIdChanges(idBlockStore(st.idBlocks), dbId, changes);
  return batch.results;
}

/** The rows of the changed documents, their new bodies and their per-principal rows. */
function writeDocuments(st: Statements, dbId: number, batch: MergedBatch, firstSeq: number): void {
  for (const doc of batch.documents) {
    const seq = firstSeq + doc.lastChange;
    const deleted = doc.deleted ? 1 : 0;
    let docPk = doc.docPk;
    if (docPk === undefined) {
      docPk = Number(st.insertDocument.run(dbId, doc.id, doc.treeJson, doc.winner, deleted, seq).lastInsertRowid);
    } else {
      st.updateDocument.run(doc.treeJson, doc.winner, deleted, seq, docPk);
    }
    for (const [bodies, leaf] of [[doc.newBodies, 1], [doc.supersededBodies, 0]] as const) {
      for (const [rev, body] of bodies) {
        st.insertBody.run(docPk, rev, body, leaf);
        countReferences(st, dbId, docPk, rev, body);
      }
    }
    if (doc.docPk !== undefined) st.deleteAccessRows.run(dbId, doc.id);
  }
  const storedBody = (doc: { docPk: number | undefined; winner: string }) => (doc.docPk === undefined ? undefined : st.body.get(doc.docPk, doc.winner));
  for (const row of accessRowsOf(batch.documents, firstSeq, storedBody)) {
    st.insertAccessRow.run(dbId, row.principal, row.id, row.seq, row.deleted ? 1 : 0);
  }
}

/**
 * One compaction slice inside the caller's transaction: deletes up to `limit` superseded bodies of
 * database `dbId`; answers how many. A body is superseded only once its revision stopped being a
 * leaf, and never becomes a leaf's again, so this cannot lose a leaf whatever writes run between
 * two slices, and an interrupted compaction merely leaves some bodies to the next one.
 */
/** One slice of compaction's stemming (kit/compaction-slices.ts); `forget` drops what is cached of a stemmed document. */
export function stemTrees(st: Statements, dbId: number, afterId: string, limit: number, forget: (id: string) => void): StemmedSlice {
  const revsLimit = st.revsLimit.get(dbId) ?? REVS_LIMIT;
  const rows = st.treesAfter.all(dbId, afterId, limit);
  for (const row of rows) {
    const tree = stemmedTree(row.tree, revsLimit);
    if (tree === undefined) continue;
    st.replaceTree.run(tree, row.doc_pk);
    forget(row.id);
  }
  return { lastId: rows[rows.length - 1]?.id ?? afterId, read: rows.length };
}

export function reclaimSuperseded(st: Statements, dbId: number, limit: number): ReclaimedSlice {
  const reclaimed = st.reclaimSuperseded.all(dbId, limit);
  const bytes = reclaimed.reduce((sum, row) => sum + row.size, 0);
  if (reclaimed.length > 0) st.subtractCompactable.run(bytes, dbId);
  releaseReferences(st, dbId, reclaimed);
  return { bodies: reclaimed.length, bytes };
}
