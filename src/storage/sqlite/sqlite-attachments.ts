/**
 * Attachment data of the SQLite backend (see attachment-store.ts): chunks in the chunk file's
 * `att.attachment_chunks` (sqlite-chunk-file.ts), one `attachment_blobs` row per digest and database
 * with the count of bodies naming it. Uploads go through the write queue a few chunks per
 * transaction; reads take one chunk per statement. A blob row is removed in one transaction and
 * its chunks in a later one, never the other way round (the files commit separately).
 */
import { UNREFERENCED_GRACE_MS, type AttachmentStore, type ByteRange, type SavedAttachment } from '../attachment-store.js';
import { chunksOf, digestsOfBody, saveInChunks, type ChunkSink } from '../kit/attachment-chunks.js';
import type { Connection } from './sqlite-connection.js';
import type { WriteQueue } from './sqlite-write-queue.js';

interface BlobRow {
  blob_id: number;
  length: number;
}

/** Statements on attachment data, prepared once per connection. */
export function prepareAttachmentStatements(db: Connection) {
  return {
    insertBlob: db.prepare<[number, number]>('INSERT INTO attachment_blobs (db_id, created) VALUES (?, ?)'),
    insertChunk: db.prepare<[number, number, Buffer]>('INSERT INTO att.attachment_chunks (blob_id, idx, data) VALUES (?, ?, ?)'),
    blobByDigest: db.prepare<[number, string], BlobRow>('SELECT blob_id, length FROM attachment_blobs WHERE db_id = ? AND digest = ?'),
    dbOfBlob: db.prepare<[number], number>('SELECT db_id FROM attachment_blobs WHERE blob_id = ?').pluck(),
    nameBlob: db.prepare<[string, number, number]>('UPDATE attachment_blobs SET digest = ?, length = ? WHERE blob_id = ?'),
    deleteBlob: db.prepare<[number]>('DELETE FROM attachment_blobs WHERE blob_id = ?'),
    deleteChunks: db.prepare<[number]>('DELETE FROM att.attachment_chunks WHERE blob_id = ?'),
    /** Chunks of blobs whose row is gone (removed, or a crash between the two files' commits). */
    deleteUnreachableChunks: db.prepare<[]>('DELETE FROM att.attachment_chunks WHERE blob_id NOT IN (SELECT blob_id FROM main.attachment_blobs)'),
    chunk: db.prepare<[number, number], Buffer>('SELECT data FROM att.attachment_chunks WHERE blob_id = ? AND idx = ?').pluck(),
    addRef: db.prepare<[number, string, string]>('INSERT OR IGNORE INTO attachment_refs (doc_pk, rev, digest) VALUES (?, ?, ?)'),
    countRef: db.prepare<[number, number, string]>('UPDATE attachment_blobs SET refs = refs + ? WHERE db_id = ? AND digest = ?'),
    dropRefs: db.prepare<[number, string], string>('DELETE FROM attachment_refs WHERE doc_pk = ? AND rev = ? RETURNING digest').pluck(),
    unreferenced: db.prepare<[number, number]>('DELETE FROM attachment_blobs WHERE db_id = ? AND refs = 0 AND created < ?'),
    deleteRefsOfDatabase: db.prepare<[number]>('DELETE FROM attachment_refs WHERE doc_pk IN (SELECT doc_pk FROM documents WHERE db_id = ?)'),
    deleteBlobsOfDatabase: db.prepare<[number]>('DELETE FROM attachment_blobs WHERE db_id = ?'),
  };
}

type AttachmentStatements = ReturnType<typeof prepareAttachmentStatements>;

/** Inside a revision write: counts the digests a new body names. Throws when one is not stored. */
export function countReferences(st: AttachmentStatements, dbId: number, docPk: number, rev: string, body: string): void {
  for (const digest of digestsOfBody(body)) {
    if (st.addRef.run(docPk, rev, digest).changes === 0) continue;
    if (st.countRef.run(1, dbId, digest).changes !== 1) throw new Error(`attachment data ${digest} is not stored`);
  }
}

/** Inside a compaction slice: the bodies of `reclaimed` no longer name their digests. */
export function releaseReferences(st: AttachmentStatements, dbId: number, reclaimed: readonly { doc_pk: number; rev: string }[]): void {
  for (const { doc_pk: docPk, rev } of reclaimed) {
    for (const digest of st.dropRefs.all(docPk, rev)) st.countRef.run(-1, dbId, digest);
  }
}

/** Removes the rows of data no body has named for longer than the grace period (then `dropUnreachableChunks`). */
export function sweepUnreferenced(st: AttachmentStatements, dbId: number, graceMs = UNREFERENCED_GRACE_MS): number {
  return st.unreferenced.run(dbId, Date.now() - graceMs).changes;
}

/** In a transaction after the one that removed blob rows: their chunks. */
export function dropUnreachableChunks(st: AttachmentStatements): void {
  st.deleteUnreachableChunks.run();
}

/** The rows of a deleted database's data (then `dropUnreachableChunks`). */
export function deleteAttachmentsOfDatabase(st: AttachmentStatements, dbId: number): void {
  st.deleteRefsOfDatabase.run(dbId);
  st.deleteBlobsOfDatabase.run(dbId);
}

export class SqliteAttachments implements AttachmentStore {
  readonly #st: AttachmentStatements;
  readonly #databaseId: (name: string) => number;
  readonly #sink: ChunkSink;

  constructor(st: AttachmentStatements, queue: WriteQueue, databaseId: (name: string) => number) {
    this.#st = st;
    this.#databaseId = databaseId;
    this.#sink = {
      begin: (db) => queue.enqueue(() => Number(st.insertBlob.run(databaseId(db), Date.now()).lastInsertRowid)),
      append: (blob, first, chunks) =>
        queue.enqueue(() => {
          chunks.forEach((chunk, i) => st.insertChunk.run(blob, first + i, chunk));
        }),
      finish: async (blob, digest, length) => {
        const duplicate = await queue.enqueue(() => {
          const dbId = st.dbOfBlob.get(blob)!;
          if (st.blobByDigest.get(dbId, digest) === undefined) return void st.nameBlob.run(digest, length, blob);
          st.deleteBlob.run(blob);
          return true;
        });
        if (duplicate) await queue.enqueue(() => st.deleteChunks.run(blob));
      },
      whole: (db, chunks, digest, length) =>
        queue.enqueue(() => {
          const dbId = databaseId(db);
          if (st.blobByDigest.get(dbId, digest) !== undefined) return;
          const blob = Number(st.insertBlob.run(dbId, Date.now()).lastInsertRowid);
          chunks.forEach((chunk, i) => st.insertChunk.run(blob, i, chunk));
          st.nameBlob.run(digest, length, blob);
        }),
      abandon: async (blob) => {
        await queue.enqueue(() => st.deleteBlob.run(blob));
        await queue.enqueue(() => st.deleteChunks.run(blob));
      },
    };
  }

  save(db: string, source: AsyncIterable<Buffer>, maxBytes: number, tooLarge: () => Error): Promise<SavedAttachment> {
    return saveInChunks(this.#sink, db, source, maxBytes, tooLarge);
  }

  async has(db: string, digest: string): Promise<boolean> {
    return this.#st.blobByDigest.get(this.#databaseId(db), digest) !== undefined;
  }

  async read(db: string, digest: string, range?: ByteRange): Promise<AsyncIterable<Buffer> | undefined> {
    const blob = this.#st.blobByDigest.get(this.#databaseId(db), digest);
    if (blob === undefined) return undefined;
    return chunksOf(blob.length, range, async (index) => this.#st.chunk.get(blob.blob_id, index));
  }
}
