/**
 * Attachment data of the PostgreSQL backend (see attachment-store.ts): the same tables as SQLite's.
 * Uploads write a few chunks per statement outside the write lanes (the data is not part of the
 * database until a revision names it); reference counts change inside the revision's transaction.
 */
import type pg from 'pg';
import type { ClientBase } from 'pg';
import { databaseMissing } from '../../errors/catalog.js';
import { UNREFERENCED_GRACE_MS, type AttachmentStore, type ByteRange, type SavedAttachment } from '../attachment-store.js';
import { chunksOf, saveInChunks, type ChunkSink } from '../kit/attachment-chunks.js';

const UNIQUE_VIOLATION = '23505';

/** Inside a revision write: counts the digests the new bodies name. Throws when one is not stored. */
export async function countReferences(client: ClientBase, dbId: number, refs: { docPk: number; rev: string; digest: string }[]): Promise<void> {
  if (refs.length === 0) return;
  const { rows } = await client.query<{ digest: string }>(
    `WITH added AS (
       INSERT INTO attachment_refs (doc_pk, rev, digest) SELECT * FROM unnest($2::int8[], $3::text[], $4::text[])
       ON CONFLICT DO NOTHING RETURNING digest),
     counted AS (SELECT digest, count(*) AS n FROM added GROUP BY digest)
     UPDATE attachment_blobs b SET refs = b.refs + c.n FROM counted c WHERE b.db_id = $1 AND b.digest = c.digest RETURNING b.digest`,
    [dbId, refs.map((ref) => ref.docPk), refs.map((ref) => ref.rev), refs.map((ref) => ref.digest)],
  );
  const found = new Set(rows.map((row) => row.digest));
  const missing = refs.find((ref) => !found.has(ref.digest));
  if (missing) throw new Error(`attachment data ${missing.digest} is not stored`);
}

/** Removes data no body has named for longer than the grace period; answers how many blobs. */
export async function sweepUnreferenced(pool: pg.Pool, db: string, graceMs = UNREFERENCED_GRACE_MS): Promise<number> {
  const { rowCount } = await pool.query(
    `WITH gone AS (
       DELETE FROM attachment_blobs WHERE db_id = (SELECT db_id FROM databases WHERE name = $1) AND refs = 0 AND created < $2
       RETURNING blob_id)
     DELETE FROM attachment_chunks c USING gone g WHERE c.blob_id = g.blob_id`,
    [db, Date.now() - graceMs],
  );
  return rowCount ?? 0;
}

/** Everything of a deleted database, inside its deletion's transaction. */
export async function deleteAttachmentsOfDatabase(client: ClientBase, dbId: number): Promise<void> {
  await client.query('DELETE FROM attachment_refs r USING documents d WHERE r.doc_pk = d.doc_pk AND d.db_id = $1', [dbId]);
  await client.query('DELETE FROM attachment_chunks c USING attachment_blobs b WHERE c.blob_id = b.blob_id AND b.db_id = $1', [dbId]);
  await client.query('DELETE FROM attachment_blobs WHERE db_id = $1', [dbId]);
}

export class PostgresAttachments implements AttachmentStore {
  readonly #pool: pg.Pool;
  readonly #sink: ChunkSink;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
    const drop = async (blob: number): Promise<void> => {
      await pool.query('WITH gone AS (DELETE FROM attachment_blobs WHERE blob_id = $1) DELETE FROM attachment_chunks WHERE blob_id = $1', [blob]);
    };
    this.#sink = {
      begin: async (db) => {
        const { rows } = await pool.query<{ blob_id: string }>(
          'INSERT INTO attachment_blobs (db_id, created) SELECT db_id, $2 FROM databases WHERE name = $1 RETURNING blob_id',
          [db, Date.now()],
        );
        if (rows.length === 0) throw databaseMissing();
        return Number(rows[0]!.blob_id);
      },
      append: async (blob, first, chunks) => {
        await pool.query('INSERT INTO attachment_chunks (blob_id, idx, data) SELECT $1, * FROM unnest($2::int4[], $3::bytea[])', [
          blob,
          chunks.map((_, i) => first + i),
          chunks,
        ]);
      },
      finish: async (blob, digest, length) => {
        try {
          await pool.query('UPDATE attachment_blobs SET digest = $2, length = $3 WHERE blob_id = $1', [blob, digest, length]);
        } catch (error) {
          if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
          await drop(blob);
        }
      },
      abandon: drop,
    };
  }

  save(db: string, source: AsyncIterable<Buffer>, maxBytes: number, tooLarge: () => Error): Promise<SavedAttachment> {
    return saveInChunks(this.#sink, db, source, maxBytes, tooLarge);
  }

  async has(db: string, digest: string): Promise<boolean> {
    return (await this.#blob(db, digest)) !== undefined;
  }

  async read(db: string, digest: string, range?: ByteRange): Promise<AsyncIterable<Buffer> | undefined> {
    const blob = await this.#blob(db, digest);
    if (blob === undefined) return undefined;
    return chunksOf(blob.length, range, async (index) => {
      const { rows } = await this.#pool.query<{ data: Buffer }>('SELECT data FROM attachment_chunks WHERE blob_id = $1 AND idx = $2', [blob.id, index]);
      return rows[0]?.data;
    });
  }

  async #blob(db: string, digest: string): Promise<{ id: number; length: number } | undefined> {
    const { rows } = await this.#pool.query<{ blob_id: string; length: string; known: boolean }>(
      `SELECT b.blob_id, b.length FROM databases d LEFT JOIN attachment_blobs b ON b.db_id = d.db_id AND b.digest = $2 WHERE d.name = $1`,
      [db, digest],
    );
    if (rows.length === 0) throw databaseMissing();
    const row = rows[0]!;
    return row.blob_id === null ? undefined : { id: Number(row.blob_id), length: Number(row.length) };
  }
}
