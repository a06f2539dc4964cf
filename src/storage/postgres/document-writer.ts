/**
 * Applies a batch of edits of one database inside the caller's transaction, which already holds the
 * database row's lock. The edits are merged in memory, in order, with the shared revision-tree
 * functions (so a later edit sees an earlier one), then written with a constant number of
 * statements whatever the batch size.
 */
import type { ClientBase } from 'pg';
import { applyEdit, mergePath, winningRevision, type RevisionTree, type TreeUpdate } from '../revision-tree.js';
import type { DocumentEdit, EditResult } from '../storage.js';

export interface QueuedEdit {
  edit: DocumentEdit;
  newEdits: boolean;
}

interface DocumentState {
  id: string;
  /** undefined: the document is not stored yet. */
  docPk: number | undefined;
  tree: RevisionTree | undefined;
  /** Deleted flag of the stored row; undefined when there is no row. */
  storedDeleted: boolean | undefined;
  /** Index among this batch's changes of the document's latest change; -1 when unchanged. */
  lastChange: number;
  /** Bodies of revisions created by this batch that are still leaves: rev → JSON. */
  newBodies: Map<string, string>;
}

interface DocumentRow {
  doc_pk: number;
  id: string;
  tree: string;
  deleted: boolean;
}

const conflict = (id: string): EditResult => ({ ok: false, id, error: 'conflict', reason: 'Document update conflict.' });

/**
 * Writes `edits` (validated by the caller) into database `dbId`. Each changed edit takes its own
 * update sequence, allocated by incrementing the database row in this transaction, so two nodes
 * never hand out the same sequence; a document ends at the sequence of its latest change.
 */
export async function writeEdits(client: ClientBase, dbId: number, edits: readonly QueuedEdit[]): Promise<EditResult[]> {
  const ids = [...new Set(edits.map((queued) => queued.edit.id))];
  // FOR UPDATE: the rows stay ours until COMMIT, whoever else (another node) edits them. Sorted so
  // that lock order is the same everywhere.
  const { rows } = await client.query<DocumentRow>(
    'SELECT doc_pk, id, tree, deleted FROM documents WHERE db_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE',
    [dbId, ids],
  );
  const states = new Map<string, DocumentState>();
  for (const row of rows) {
    states.set(row.id, {
      id: row.id,
      docPk: row.doc_pk,
      tree: JSON.parse(row.tree) as RevisionTree,
      storedDeleted: row.deleted,
      lastChange: -1,
      newBodies: new Map(),
    });
  }

  const results: EditResult[] = [];
  const obsolete: { docPk: number; rev: string }[] = [];
  let changes = 0;
  let sizeDelta = 0;
  for (const { edit, newEdits } of edits) {
    let state = states.get(edit.id);
    if (state === undefined) {
      state = { id: edit.id, docPk: undefined, tree: undefined, storedDeleted: undefined, lastChange: -1, newBodies: new Map() };
      states.set(edit.id, state);
    }
    const update: TreeUpdate = newEdits
      ? applyEdit(state.tree, edit)
      : mergePath(state.tree, edit.revPath ?? [], edit.deleted);
    if (!update.ok) {
      results.push(conflict(edit.id));
      continue;
    }
    results.push({ ok: true, id: edit.id, rev: update.rev });
    if (!update.changed) continue;

    state.tree = update.tree;
    state.lastChange = changes++;
    const body = JSON.stringify(edit.body);
    state.newBodies.set(update.rev, body);
    sizeDelta += Buffer.byteLength(body);
    for (const leaf of update.obsoleteLeaves) {
      const created = state.newBodies.get(leaf);
      if (created !== undefined) {
        state.newBodies.delete(leaf);
        sizeDelta -= Buffer.byteLength(created);
      } else if (state.docPk !== undefined) {
        obsolete.push({ docPk: state.docPk, rev: leaf });
      }
    }
  }
  if (changes === 0) return results;

  if (obsolete.length > 0) {
    const removed = await client.query<{ size: number }>(
      `DELETE FROM leaf_bodies b USING unnest($1::int8[], $2::text[]) AS o(doc_pk, rev)
       WHERE b.doc_pk = o.doc_pk AND b.rev = o.rev RETURNING octet_length(b.body)::int8 AS size`,
      [obsolete.map((o) => o.docPk), obsolete.map((o) => o.rev)],
    );
    for (const row of removed.rows) sizeDelta -= row.size;
  }

  const changed = [...states.values()].filter((state) => state.lastChange >= 0);
  let liveDelta = 0;
  let deletedDelta = 0;
  const winners: string[] = [];
  const deletedFlags: boolean[] = [];
  for (const state of changed) {
    const tree = state.tree as RevisionTree;
    const winner = winningRevision(tree) as string;
    const deleted = tree[winner].deleted;
    winners.push(winner);
    deletedFlags.push(deleted);
    liveDelta += Number(!deleted) - Number(state.storedDeleted === false);
    deletedDelta += Number(deleted) - Number(state.storedDeleted === true);
  }

  const counters = await client.query<{ update_seq: number }>(
    `UPDATE databases SET update_seq = update_seq + $2, doc_count = doc_count + $3,
       deleted_doc_count = deleted_doc_count + $4, data_size = data_size + $5
     WHERE db_id = $1 RETURNING update_seq`,
    [dbId, changes, liveDelta, deletedDelta, sizeDelta],
  );
  if (counters.rowCount !== 1) throw new Error(`database ${dbId} vanished while locked`);
  const firstSeq = counters.rows[0].update_seq - changes + 1;

  const written = await client.query<{ doc_pk: number; id: string }>(
    `INSERT INTO documents (db_id, id, tree, winner, deleted, seq)
     SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bool[], $6::int8[])
     ON CONFLICT (db_id, id) DO UPDATE
       SET tree = excluded.tree, winner = excluded.winner, deleted = excluded.deleted, seq = excluded.seq
     RETURNING doc_pk, id`,
    [
      dbId,
      changed.map((state) => state.id),
      changed.map((state) => JSON.stringify(state.tree)),
      winners,
      deletedFlags,
      changed.map((state) => firstSeq + state.lastChange),
    ],
  );
  const docPks = new Map(written.rows.map((row) => [row.id, row.doc_pk]));

  const bodyPks: number[] = [];
  const bodyRevs: string[] = [];
  const bodies: string[] = [];
  for (const state of changed) {
    const docPk = docPks.get(state.id) as number;
    for (const [rev, body] of state.newBodies) {
      bodyPks.push(docPk);
      bodyRevs.push(rev);
      bodies.push(body);
    }
  }
  if (bodies.length > 0) {
    await client.query(
      'INSERT INTO leaf_bodies (doc_pk, rev, body) SELECT * FROM unnest($1::int8[], $2::text[], $3::text[])',
      [bodyPks, bodyRevs, bodies],
    );
  }
  return results;
}
