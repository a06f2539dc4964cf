/**
 * Applies a batch of edits of one database inside the caller's transaction, which already holds the
 * database row's lock. The edits are merged in memory, in order, by the shared batch-merge.ts (so a
 * later edit sees an earlier one), then written with a constant number of statements whatever the
 * batch size.
 */
import type { ClientBase } from 'pg';
import { mergeBatch, type ChangedDocument, type MergedBatch, type QueuedEdit, type StoredDocument } from '../kit/batch-merge.js';
import { digestsOfBody } from '../kit/attachment-chunks.js';
import { accessRowsOf } from '../kit/access-rows.js';
import type { EditResult } from '../storage.js';
import { countReferences } from './postgres-attachments.js';

interface DocumentRow {
  doc_pk: number;
  id: string;
  tree: string;
  deleted: boolean;
}

/**
 * Writes `edits` (validated by the caller) into database `dbId`. Each changed edit takes its own
 * update sequence, allocated by incrementing the database row in this transaction, so two nodes
 * never hand out the same sequence; a document ends at the sequence of its latest change.
 */
export async function writeEdits(client: ClientBase, dbId: number, edits: readonly QueuedEdit[], revsLimit: number): Promise<EditResult[]> {
  const stored = await lockDocuments(client, dbId, [...new Set(edits.map((queued) => queued.edit.id))]);
  const batch = mergeBatch(edits, (id) => stored.get(id), revsLimit);
  if (batch.changes === 0) return batch.results;
  const superseded = await supersedeBodies(client, batch.obsolete);
  const firstSeq = await takeSequences(client, dbId, batch, superseded);
  const docPks = await upsertDocuments(client, dbId, batch.documents, firstSeq);
  await insertBodies(client, dbId, batch.documents, docPks);
  await replaceAccessRows(client, dbId, batch.documents, firstSeq);
  return batch.results;
}

/** The per-principal rows of the changed documents (access-store.ts), replaced in this transaction. */
async function replaceAccessRows(client: ClientBase, dbId: number, changed: ChangedDocument[], firstSeq: number): Promise<void> {
  const stored = changed.filter((doc) => doc.docPk !== undefined);
  if (stored.length > 0) await client.query('DELETE FROM access_rows WHERE db_id = $1 AND id = ANY($2::text[])', [dbId, stored.map((doc) => doc.id)]);
  // A stored leaf that became the winner: its body is read here (the batch did not write it).
  const unwritten = stored.filter((doc) => !doc.newBodies.has(doc.winner));
  const bodies = new Map<number, string>();
  if (unwritten.length > 0) {
    const { rows } = await client.query<{ doc_pk: string; body: string }>(
      'SELECT b.doc_pk, b.body FROM revision_bodies b JOIN unnest($1::int8[], $2::text[]) AS w(doc_pk, rev) ON b.doc_pk = w.doc_pk AND b.rev = w.rev',
      [unwritten.map((doc) => doc.docPk), unwritten.map((doc) => doc.winner)],
    );
    for (const row of rows) bodies.set(Number(row.doc_pk), row.body);
  }
  const rows = accessRowsOf(changed, firstSeq, (doc) => (doc.docPk === undefined ? undefined : bodies.get(Number(doc.docPk))));
  if (rows.length === 0) return;
  await client.query(
    'INSERT INTO access_rows (db_id, principal, id, seq, deleted) SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int8[], $5::bool[])',
    [dbId, rows.map((row) => row.principal), rows.map((row) => row.id), rows.map((row) => row.seq), rows.map((row) => row.deleted)],
  );
}

/**
 * The stored rows of `ids`, locked FOR UPDATE: they stay ours until COMMIT, whoever else (another
 * node) edits them. Sorted so that lock order is the same everywhere.
 */
async function lockDocuments(client: ClientBase, dbId: number, ids: string[]): Promise<Map<string, StoredDocument>> {
  const { rows } = await client.query<DocumentRow>(
    'SELECT doc_pk, id, tree, deleted FROM documents WHERE db_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE',
    [dbId, ids],
  );
  return new Map(rows.map((row) => [row.id, { docPk: row.doc_pk, tree: row.tree, deleted: row.deleted }]));
}

/**
 * Marks the bodies of revisions that stopped being leaves superseded: they stay readable until
 * compaction. Answers how many bytes they hold.
 */
async function supersedeBodies(client: ClientBase, obsolete: MergedBatch['obsolete']): Promise<number> {
  if (obsolete.length === 0) return 0;
  const marked = await client.query<{ size: number }>(
    `UPDATE revision_bodies b SET leaf = false FROM unnest($1::int8[], $2::text[]) AS o(doc_pk, rev)
     WHERE b.doc_pk = o.doc_pk AND b.rev = o.rev AND b.leaf RETURNING octet_length(b.body)::int8 AS size`,
    [obsolete.map((o) => o.docPk), obsolete.map((o) => o.rev)],
  );
  return marked.rows.reduce((sum, row) => sum + Number(row.size), 0);
}

/**
 * Takes the batch's update sequences and applies its counter deltas (`superseded`: bytes of stored
 * leaves it superseded); answers the first sequence.
 */
async function takeSequences(client: ClientBase, dbId: number, batch: MergedBatch, superseded: number): Promise<number> {
  const counters = await client.query<{ update_seq: number }>(
    `UPDATE databases SET update_seq = update_seq + $2, doc_count = doc_count + $3,
       deleted_doc_count = deleted_doc_count + $4, data_size = data_size + $5, compactable_size = compactable_size + $6
     WHERE db_id = $1 RETURNING update_seq`,
    [dbId, batch.changes, batch.liveDelta, batch.deletedDelta, batch.addedBytes - superseded, superseded + batch.supersededBytes],
  );
  if (counters.rowCount !== 1) throw new Error(`database ${dbId} vanished while locked`);
  return counters.rows[0].update_seq - batch.changes + 1;
}

/** One row per changed document, at the sequence of its latest change; answers id → doc_pk. */
async function upsertDocuments(client: ClientBase, dbId: number, changed: ChangedDocument[], firstSeq: number): Promise<Map<string, number>> {
  const written = await client.query<{ doc_pk: number; id: string }>(
    `INSERT INTO documents (db_id, id, tree, winner, deleted, seq)
     SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bool[], $6::int8[])
     ON CONFLICT (db_id, id) DO UPDATE
       SET tree = excluded.tree, winner = excluded.winner, deleted = excluded.deleted, seq = excluded.seq
     RETURNING doc_pk, id`,
    [
      dbId,
      changed.map((doc) => doc.id),
      changed.map((doc) => doc.treeJson),
      changed.map((doc) => doc.winner),
      changed.map((doc) => doc.deleted),
      changed.map((doc) => firstSeq + doc.lastChange),
    ],
  );
  return new Map(written.rows.map((row) => [row.id, row.doc_pk]));
}

/** The bodies of the batch's new revisions (leaves, and those the batch already superseded), in one statement. */
async function insertBodies(client: ClientBase, dbId: number, changed: ChangedDocument[], docPks: Map<string, number>): Promise<void> {
  const refs: { docPk: number; rev: string; digest: string }[] = [];
  const bodyPks: number[] = [];
  const bodyRevs: string[] = [];
  const bodies: string[] = [];
  const leaves: boolean[] = [];
  for (const doc of changed) {
    const docPk = docPks.get(doc.id) as number;
    for (const [map, leaf] of [[doc.newBodies, true], [doc.supersededBodies, false]] as const) {
      for (const [rev, body] of map) {
        bodyPks.push(docPk);
        bodyRevs.push(rev);
        bodies.push(body);
        leaves.push(leaf);
        for (const digest of digestsOfBody(body)) refs.push({ docPk, rev, digest });
      }
    }
  }
  if (bodies.length === 0) return;
  await client.query(
    'INSERT INTO revision_bodies (doc_pk, rev, body, leaf) SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::bool[])',
    [bodyPks, bodyRevs, bodies, leaves],
  );
  await countReferences(client, dbId, refs);
}
