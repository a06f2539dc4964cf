import { mergeBatch, type QueuedEdit } from '../batch-merge.js';
import type { EditResult } from '../storage.js';
import type { Statements } from './sqlite-statements.js';

/**
 * Applies a batch of edits of one database inside the caller's transaction: merges them in memory
 * (see batch-merge.ts), then writes each changed document once, keeping bodies for leaves only.
 * Each changed edit takes its own update sequence; a document ends at the sequence of its latest
 * change.
 */
export function writeEdits(st: Statements, dbId: number, edits: readonly QueuedEdit[]): EditResult[] {
  const batch = mergeBatch(edits, (id) => {
    const row = st.document.get(dbId, id);
    return row === undefined ? undefined : { docPk: row.doc_pk, tree: row.tree, deleted: row.deleted === 1 };
  });
  if (batch.changes === 0) return batch.results;

  let sizeDelta = batch.addedBytes;
  for (const { docPk, rev } of batch.obsolete) sizeDelta -= st.deleteBody.get(docPk, rev) ?? 0;
  const lastSeq = st.addChanges.get(batch.changes, batch.liveDelta, batch.deletedDelta, sizeDelta, dbId) as number;
  const firstSeq = lastSeq - batch.changes + 1;
  for (const doc of batch.documents) {
    const seq = firstSeq + doc.lastChange;
    const deleted = doc.deleted ? 1 : 0;
    let docPk = doc.docPk;
    if (docPk === undefined) {
      docPk = Number(st.insertDocument.run(dbId, doc.id, doc.treeJson, doc.winner, deleted, seq).lastInsertRowid);
    } else {
      st.updateDocument.run(doc.treeJson, doc.winner, deleted, seq, docPk);
    }
    for (const [rev, body] of doc.newBodies) st.insertBody.run(docPk, rev, body);
  }
  return batch.results;
}
