/**
 * `_purge`, `_revs_limit` and `_purged_infos_limit` of the PostgreSQL backend, inside a lane's
 * transaction that holds the database row's lock (see purge-plan.ts for what a purge does).
 */
import { principalsOfDocument } from '../kit/access-rows.js';
import type pg from 'pg';
import { PurgeTally, planDocumentPurge, type PurgeRequest } from '../../revisions/purge-plan.js';
import type { DatabaseLimit } from '../storage.js';
import { databaseMissing } from '../../errors/catalog.js';

interface Counters {
  update_seq: number;
  purge_seq: number;
  purged_infos_limit: number;
}

async function counters(client: pg.ClientBase, dbId: number): Promise<Counters> {
  const { rows } = await client.query<Counters>('SELECT update_seq, purge_seq, purged_infos_limit FROM databases WHERE db_id = $1', [dbId]);
  return rows[0]!;
}

/** The per-principal rows of a purged document: those of its remaining winner, or none. */
async function refreshAccessRows(client: pg.ClientBase, dbId: number, id: string, docPk: number, remaining: { winner: string; deleted: boolean } | undefined, seq: number | undefined): Promise<void> {
  await client.query('DELETE FROM access_rows WHERE db_id = $1 AND id = $2', [dbId, id]);
  if (remaining === undefined || seq === undefined) return;
  const { rows } = await client.query<{ body: string }>('SELECT body FROM revision_bodies WHERE doc_pk = $1 AND rev = $2', [docPk, remaining.winner]);
  const principals = principalsOfDocument(id, () => rows[0]?.body);
  if (principals.length === 0) return;
  await client.query('INSERT INTO access_rows (db_id, principal, id, seq, deleted) SELECT $1, p, $3, $4, $5 FROM unnest($2::text[]) AS p', [dbId, principals, id, seq, remaining.deleted]);
}

/** One document's purge: bodies, then the row; answers the revisions purged. */
async function purgeDocument(client: pg.ClientBase, dbId: number, request: PurgeRequest, tally: PurgeTally): Promise<string[]> {
  const { rows } = await client.query<{ doc_pk: number; tree: string; deleted: boolean }>(
    'SELECT doc_pk, tree, deleted FROM documents WHERE db_id = $1 AND id = $2 FOR UPDATE',
    [dbId, request.id],
  );
  const row = rows[0];
  if (row === undefined) return [];
  const plan = planDocumentPurge(row.tree, request.revs);
  if (plan.purged.length === 0) return [];
  // The purged bodies no longer name their attachments: their counts go down in the same statement.
  const bodies = await client.query<{ leaf: boolean; size: number }>(
    `WITH refs AS (DELETE FROM attachment_refs WHERE doc_pk = $1 AND rev = ANY($2::text[]) RETURNING digest),
     counted AS (SELECT digest, count(*) AS n FROM refs GROUP BY digest),
     released AS (UPDATE attachment_blobs a SET refs = a.refs - c.n FROM counted c WHERE a.db_id = $3 AND a.digest = c.digest)
     DELETE FROM revision_bodies WHERE doc_pk = $1 AND rev = ANY($2::text[]) RETURNING leaf, octet_length(body)::int8 AS size`,
    [row.doc_pk, plan.removed, dbId],
  );
  for (const body of bodies.rows) tally.body(body.leaf, Number(body.size));
  const seq = tally.document(row.deleted, plan);
  if (plan.remaining === undefined || seq === undefined) {
    await client.query('DELETE FROM documents WHERE doc_pk = $1', [row.doc_pk]);
  } else {
    await client.query('UPDATE documents SET tree = $2, winner = $3, deleted = $4, seq = $5 WHERE doc_pk = $1', [
      row.doc_pk,
      plan.remaining.treeJson,
      plan.remaining.winner,
      plan.remaining.deleted,
      seq,
    ]);
  }
  await refreshAccessRows(client, dbId, request.id, row.doc_pk, plan.remaining, seq);
  await client.query('INSERT INTO purged_infos (db_id, purge_seq, id, revs) VALUES ($1, $2, $3, $4)', [dbId, tally.purgeSeq, request.id, JSON.stringify(plan.purged)]);
  return plan.purged;
}

/** Purges, in order; per request, the revisions purged. */
export async function purgeDocuments(client: pg.ClientBase, dbId: number, requests: readonly PurgeRequest[]): Promise<string[][]> {
  const before = await counters(client, dbId);
  const tally = new PurgeTally(before.update_seq, before.purge_seq);
  const results: string[][] = [];
  for (const request of requests) results.push(await purgeDocument(client, dbId, request, tally));
  if (tally.finish()) {
    await client.query(
      `UPDATE databases SET update_seq = $2, purge_seq = $3, doc_count = doc_count + $4, deleted_doc_count = deleted_doc_count + $5,
       data_size = data_size + $6, compactable_size = compactable_size + $7 WHERE db_id = $1`,
      [dbId, tally.updateSeq, tally.purgeSeq, tally.liveDelta, tally.deletedDelta, tally.dataDelta, tally.compactableDelta],
    );
    await client.query('DELETE FROM purged_infos WHERE db_id = $1 AND purge_seq <= $2', [dbId, tally.purgeSeq - before.purged_infos_limit]);
  }
  return results;
}

/** The purges remembered, oldest first. */
export async function purgedInfos(db: pg.Pool, name: string): Promise<PurgeRequest[]> {
  const { rows } = await db.query<{ id: string | null; revs: string | null }>(
    `SELECT p.id, p.revs FROM databases x LEFT JOIN purged_infos p ON p.db_id = x.db_id WHERE x.name = $1 ORDER BY p.purge_seq`,
    [name],
  );
  if (rows.length === 0) throw databaseMissing();
  return rows.flatMap((row) => (row.id === null ? [] : [{ id: row.id, revs: JSON.parse(row.revs as string) as string[] }]));
}

export async function setDatabaseLimit(client: pg.ClientBase, dbId: number, limit: DatabaseLimit, value: number): Promise<void> {
  const column = limit === 'revs_limit' ? 'revs_limit' : 'purged_infos_limit';
  await client.query(`UPDATE databases SET ${column} = $2 WHERE db_id = $1`, [dbId, value]);
  if (limit === 'purged_infos_limit') {
    await client.query('DELETE FROM purged_infos WHERE db_id = $1 AND purge_seq <= (SELECT purge_seq FROM databases WHERE db_id = $1) - $2', [dbId, value]);
  }
}
