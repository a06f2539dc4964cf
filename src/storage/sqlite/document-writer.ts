import { applyEdit, mergePath, winningRevision, type RevisionTree, type TreeUpdate } from '../revision-tree.js';
import type { DocumentEdit, EditResult } from '../storage.js';
import type { Statements } from './statements.js';

/**
 * Applies one edit inside the caller's transaction: merges it into the stored revision tree,
 * keeps bodies for leaves only, and moves the document to a new update sequence.
 */
export function writeEdit(st: Statements, dbId: number, edit: DocumentEdit, newEdits: boolean): EditResult {
  const row = st.document.get(dbId, edit.id);
  const tree = row === undefined ? undefined : (JSON.parse(row.tree) as RevisionTree);
  const update: TreeUpdate = newEdits
    ? applyEdit(tree, edit)
    : mergePath(tree, edit.revPath ?? [], edit.deleted);
  if (!update.ok) return { ok: false, id: edit.id, error: 'conflict', reason: 'Document update conflict.' };
  if (!update.changed) return { ok: true, id: edit.id, rev: update.rev };

  const winner = winningRevision(update.tree) as string;
  const deleted = update.tree[winner].deleted;
  const treeJson = JSON.stringify(update.tree);
  const seq = st.nextSeq.get(dbId) as number;
  let docPk: number;
  if (row === undefined) {
    docPk = Number(st.insertDocument.run(dbId, edit.id, treeJson, winner, deleted ? 1 : 0, seq).lastInsertRowid);
  } else {
    docPk = row.doc_pk;
    st.updateDocument.run(treeJson, winner, deleted ? 1 : 0, seq, docPk);
  }

  const body = JSON.stringify(edit.body);
  st.insertBody.run(docPk, update.rev, body);
  let sizeDelta = Buffer.byteLength(body);
  for (const leaf of update.obsoleteLeaves) sizeDelta -= st.deleteBody.get(docPk, leaf) ?? 0;

  const wasLive = row !== undefined && row.deleted === 0;
  const wasDeleted = row !== undefined && row.deleted === 1;
  const liveDelta = Number(!deleted) - Number(wasLive);
  const deletedDelta = Number(deleted) - Number(wasDeleted);
  st.addToCounters.run(liveDelta, deletedDelta, sizeDelta, dbId);
  return { ok: true, id: edit.id, rev: update.rev };
}
