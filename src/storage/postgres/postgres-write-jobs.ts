/**
 * What each write of the PostgreSQL backend does inside its lane's transaction
 * (postgres-write-queue.ts). Every job of a batch targets one database name; its row is locked at
 * first use and stays locked until COMMIT, before any document row, so every writer takes locks in
 * the same order (no deadlocks) and writers of one database are serialised across nodes.
 */
import { dropViewTables } from './postgres-views.js';
import { dropSearchTables } from './postgres-search.js';
import type pg from 'pg';
import { databaseMissing } from '../../errors/catalog.js';
import { isCouchError } from '../../errors/couch-error.js';
import type { QueuedEdit } from '../kit/batch-merge.js';
import { decideLocalWrite } from '../kit/local-revisions.js';
import type { PurgeRequest } from '../../revisions/purge-plan.js';
import type { DatabaseLimit, DocumentEdit, DocumentLimits, JsonObject, SecurityObject } from '../storage.js';
import { stemmedTree, type ReclaimedSlice, type StemmedSlice } from '../kit/compaction-slices.js';
import { purgeDocuments, setDatabaseLimit } from './postgres-purge.js';
import { instanceStartTime } from '../kit/stored-rows.js';
import { REVS_LIMIT } from '../../revisions/revision-tree.js';
import type { Outcome } from './postgres-write-queue.js';
import { writeEdits } from './postgres-writer.js';
import { deleteAttachmentsOfDatabase } from './postgres-attachments.js';

/** A write, queued in the lane of its database name. */
export type WriteJob =
  | { kind: 'create'; security: SecurityObject }
  | { kind: 'delete' }
  | { kind: 'security'; security: SecurityObject }
  | DocumentsJob
  /** A put of a local document carries its body; a delete carries none. */
  | { kind: 'local'; id: string; rev: string | undefined; body: JsonObject | undefined }
  /** One compaction slice: up to `limit` superseded bodies. */
  | { kind: 'compact'; limit: number }
  /** One slice of compaction's stemming: up to `limit` documents after `afterId`. */
  | { kind: 'stem'; afterId: string; limit: number }
  | { kind: 'purge'; requests: readonly PurgeRequest[] }
  | { kind: 'limit'; limit: DatabaseLimit; value: number };

/** `durable` false: a slice of a larger write but its last, made durable by the last one's commit. */
type DocumentsJob = { kind: 'documents'; edits: DocumentEdit[]; newEdits: boolean; limits: DocumentLimits; durable: boolean };
type DatabaseJob = Exclude<WriteJob, DocumentsJob>;

/** The database row of one batch, locked at first use and kept locked until the batch commits. */
class LockedDatabase {
  readonly client: pg.PoolClient;
  readonly name: string;
  /** undefined: not looked up yet; null: does not exist. */
  #id: number | null | undefined;

  constructor(client: pg.PoolClient, name: string) {
    this.client = client;
    this.name = name;
  }

  async id(): Promise<number | undefined> {
    if (this.#id === undefined) {
      const { rows } = await this.client.query<{ db_id: number; revs_limit: number }>(
        'SELECT db_id, revs_limit FROM databases WHERE name = $1 FOR NO KEY UPDATE',
        [this.name],
      );
      this.#id = rows.length === 0 ? null : rows[0].db_id;
      this.revsLimit = rows[0]?.revs_limit ?? REVS_LIMIT;
    }
    return this.#id ?? undefined;
  }

  /** The database's `_revs_limit`, read with its id (and changed only under the same lock). */
  revsLimit = REVS_LIMIT;

  set(id: number | null | undefined): void {
    this.#id = id;
    this.revsLimit = REVS_LIMIT;
  }
}

/**
 * Runs a lane's batch in order inside one transaction. Consecutive document writes are merged
 * into one `writeEdits` call. A job that finds its database missing fails alone (it wrote
 * nothing); any other error aborts the batch (the lanes then retry each job alone).
 */
export async function executeBatch(client: pg.PoolClient, name: string, jobs: WriteJob[]): Promise<Outcome[]> {
  const database = new LockedDatabase(client, name);
  // Nothing of the batch is answered on this commit alone: no wait for the WAL flush. PostgreSQL
  // writes its WAL in order, so a crash loses these with everything after them, never a part.
  if (jobs.every((job) => job.kind === 'documents' && !job.durable)) await client.query('SET LOCAL synchronous_commit = off');
  const outcomes: Outcome[] = [];
  let i = 0;
  while (i < jobs.length) {
    const job = jobs[i];
    if (job.kind !== 'documents') {
      outcomes.push(await runDatabaseJob(database, job));
      i++;
      continue;
    }
    let end = i;
    while (end < jobs.length && jobs[end].kind === 'documents') end++;
    outcomes.push(...(await writeDocuments(database, jobs.slice(i, end) as DocumentsJob[])));
    i = end;
  }
  return outcomes;
}

/** Consecutive document writes of one batch, merged into one `writeEdits`; one outcome per job. */
async function writeDocuments(database: LockedDatabase, group: DocumentsJob[]): Promise<Outcome[]> {
  const dbId = await database.id();
  if (dbId === undefined) return group.map(() => ({ ok: false, error: databaseMissing() }));
  const queued: QueuedEdit[] = group.flatMap((g) => g.edits.map((edit) => ({ edit, newEdits: g.newEdits, limits: g.limits })));
  const results = await writeEdits(database.client, dbId, queued, database.revsLimit);
  let offset = 0;
  return group.map((g) => {
    const value = results.slice(offset, offset + g.edits.length);
    offset += g.edits.length;
    return { ok: true, value };
  });
}

async function runDatabaseJob(database: LockedDatabase, job: DatabaseJob): Promise<Outcome> {
  try {
    return { ok: true, value: await runOne(database, job) };
  } catch (error) {
    // Only thrown before the job wrote anything; anything else must abort the batch.
    if (isCouchError(error)) return { ok: false, error };
    throw error;
  }
}

function runOne(database: LockedDatabase, job: DatabaseJob): Promise<unknown> {
  switch (job.kind) {
    case 'create':
      return createDatabase(database, job.security);
    case 'delete':
      return deleteDatabase(database);
    case 'security':
      return putSecurity(database, job.security);
    case 'local':
      return writeLocal(database, job.id, job.rev, job.body);
    case 'compact':
      return reclaimSuperseded(database, job.limit);
    case 'stem':
      return stemTrees(database, job.afterId, job.limit);
    case 'purge':
      return withDatabase(database, (dbId) => purgeDocuments(database.client, dbId, job.requests));
    case 'limit':
      return setLimit(database, job.limit, job.value);
  }
}

async function withDatabase<T>(database: LockedDatabase, work: (dbId: number) => Promise<T>): Promise<T> {
  const dbId = await database.id();
  if (dbId === undefined) throw databaseMissing();
  return work(dbId);
}

async function setLimit(database: LockedDatabase, limit: DatabaseLimit, value: number): Promise<boolean> {
  const dbId = await database.id();
  if (dbId === undefined) return false;
  await setDatabaseLimit(database.client, dbId, limit, value);
  if (limit === 'revs_limit') database.revsLimit = value;
  return true;
}

async function createDatabase(database: LockedDatabase, security: SecurityObject): Promise<boolean> {
  // Waits for a concurrent insert of the same name by another node, then does nothing.
  const { rows } = await database.client.query<{ db_id: number }>(
    `INSERT INTO databases (name, security, instance_start_time) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO NOTHING RETURNING db_id`,
    [database.name, JSON.stringify(security), instanceStartTime()],
  );
  database.set(rows.length === 1 ? rows[0].db_id : undefined);
  return rows.length === 1;
}

async function deleteDatabase(database: LockedDatabase): Promise<boolean> {
  const dbId = await database.id();
  if (dbId === undefined) return false;
  const { client } = database;
  await deleteAttachmentsOfDatabase(client, dbId);
  await client.query('DELETE FROM revision_bodies b USING documents d WHERE b.doc_pk = d.doc_pk AND d.db_id = $1', [dbId]);
  await client.query('DELETE FROM documents WHERE db_id = $1', [dbId]);
  await client.query('DELETE FROM local_documents WHERE db_id = $1', [dbId]);
  await client.query('DELETE FROM access_rows WHERE db_id = $1', [dbId]);
  await client.query('DELETE FROM mango_index_rows WHERE db_id = $1', [dbId]);
  await client.query('DELETE FROM mango_indexes WHERE db_id = $1', [dbId]);
  await client.query('DELETE FROM purged_infos WHERE db_id = $1', [dbId]);
  await dropIndexesOf(client, 'view_indexes', dbId, dropViewTables);
  await dropIndexesOf(client, 'search_indexes', dbId, dropSearchTables);
  await client.query('DELETE FROM databases WHERE db_id = $1', [dbId]);
  database.set(null);
  return true;
}

/** Every index of `catalog` the database owns: its catalog rows, then each one's tables. */
async function dropIndexesOf(client: pg.ClientBase, catalog: 'view_indexes' | 'search_indexes', dbId: number | string, dropSql: (indexId: string) => string): Promise<void> {
  const { rows } = await client.query<{ index_id: string }>(`DELETE FROM ${catalog} WHERE db_id = $1 RETURNING index_id`, [dbId]);
  for (const row of rows) await client.query(dropSql(row.index_id));
}

async function putSecurity(database: LockedDatabase, security: SecurityObject): Promise<boolean> {
  const dbId = await database.id();
  if (dbId === undefined) return false;
  await database.client.query('UPDATE databases SET security = $2 WHERE db_id = $1', [dbId, JSON.stringify(security)]);
  return true;
}

/** One slice of compaction's stemming (kit/compaction-slices.ts), under the database row's lock. */
async function stemTrees(database: LockedDatabase, afterId: string, limit: number): Promise<StemmedSlice> {
  const dbId = await database.id();
  if (dbId === undefined) throw databaseMissing();
  const { rows } = await database.client.query<{ doc_pk: string; id: string; tree: string }>(
    'SELECT doc_pk, id, tree FROM documents WHERE db_id = $1 AND id > $2 ORDER BY id LIMIT $3',
    [dbId, afterId, limit],
  );
  for (const row of rows) {
    const tree = stemmedTree(row.tree, database.revsLimit);
    if (tree !== undefined) await database.client.query('UPDATE documents SET tree = $2 WHERE doc_pk = $1', [row.doc_pk, tree]);
  }
  return { lastId: rows[rows.length - 1]?.id ?? afterId, read: rows.length };
}

/**
 * One compaction slice, under the database row's lock: deletes up to `limit` superseded bodies. A
 * body is superseded only once its revision stopped being a leaf and never becomes a leaf's again,
 * so no leaf is ever lost, whatever runs between slices or wherever a compaction is interrupted.
 */
async function reclaimSuperseded(database: LockedDatabase, limit: number): Promise<ReclaimedSlice> {
  const dbId = await database.id();
  if (dbId === undefined) throw databaseMissing();
  // The reclaimed bodies no longer name their attachments: their counts go down in the same statement.
  const { rows } = await database.client.query<{ size: number }>(
    `WITH gone AS (
       DELETE FROM revision_bodies b USING (
         SELECT s.doc_pk, s.rev FROM revision_bodies s JOIN documents d ON d.doc_pk = s.doc_pk
         WHERE NOT s.leaf AND d.db_id = $1 LIMIT $2) o
       WHERE b.doc_pk = o.doc_pk AND b.rev = o.rev RETURNING b.doc_pk, b.rev, octet_length(b.body)::int8 AS size),
     refs AS (DELETE FROM attachment_refs r USING gone g WHERE r.doc_pk = g.doc_pk AND r.rev = g.rev RETURNING r.digest),
     counted AS (SELECT digest, count(*) AS n FROM refs GROUP BY digest),
     released AS (UPDATE attachment_blobs a SET refs = a.refs - c.n FROM counted c WHERE a.db_id = $1 AND a.digest = c.digest)
     SELECT size FROM gone`,
    [dbId, limit],
  );
  const bytes = rows.reduce((sum, row) => sum + Number(row.size), 0);
  if (rows.length > 0) {
    await database.client.query('UPDATE databases SET compactable_size = compactable_size - $2 WHERE db_id = $1', [dbId, bytes]);
  }
  return { bodies: rows.length, bytes };
}

/** A put (with `body`) or a delete of a local document, under the rules of local-revisions.ts. */
async function writeLocal(database: LockedDatabase, id: string, rev: string | undefined, body: JsonObject | undefined) {
  const dbId = await database.id();
  if (dbId === undefined) throw databaseMissing();
  const { client } = database;
  const { rows } = await client.query<{ rev: number }>(
    'SELECT rev FROM local_documents WHERE db_id = $1 AND id = $2 FOR UPDATE',
    [dbId, id],
  );
  const decision = decideLocalWrite(id, rows[0]?.rev, rev, body === undefined);
  if (!decision.apply) return decision.result;
  if (body === undefined) {
    await client.query('DELETE FROM local_documents WHERE db_id = $1 AND id = $2', [dbId, id]);
  } else {
    await client.query(
      `INSERT INTO local_documents (db_id, id, rev, body) VALUES ($1, $2, $3, $4)
       ON CONFLICT (db_id, id) DO UPDATE SET rev = excluded.rev, body = excluded.body`,
      [dbId, id, decision.counter, JSON.stringify(body)],
    );
  }
  return decision.result;
}
