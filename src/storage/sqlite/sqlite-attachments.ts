/**
 * Attachment data of the SQLite backend (see attachment-store.ts): chunks in `attachment_chunks`,
 * one `attachment_blobs` row per digest and database with the count of bodies naming it. Uploads
 * go through the write queue a few chunks per transaction; reads take one chunk per statement.
 */
import {
  chunksOf,
  digestsOfBody,
  saveInChunks,
  UNREFERENCED_GRACE_MS,
  type AttachmentStore,
  type ByteRange,
  type ChunkSink,
  type SavedAttachment,
} from '../attachment-store.js';
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
    insertChunk: db.prepare<[number, number, Buffer]>('INSERT INTO attachment_chunks (blob_id, idx, data) VALUES (?, ?, ?)'),
    blobByDigest: db.prepare<[number, string], BlobRow>('SELECT blob_id, length FROM attachment_blobs WHERE db_id = ? AND digest = ?'),
    dbOfBlob: db.prepare<[number], number>('SELECT db_id FROM attachment_blobs WHERE blob_id = ?').pluck(),
    nameBlob: db.prepare<[string, number, number]>('UPDATE attachment_blobs SET digest = ?, length = ? WHERE blob_id = ?'),
    deleteBlob: db.prepare<[number]>('DELETE FROM attachment_blobs WHERE blob_id = ?'),
    deleteChunks: db.prepare<[number]>('DELETE FROM attachment_chunks WHERE blob_id = ?'),
    chunk: db.prepare<[number, number], Buffer>('SELECT data FROM attachment_chunks WHERE blob_id = ? AND idx = ?').pluck(),
    addRef: db.prepare<[number, string, string]>('INSERT OR IGNORE INTO attachment_refs (doc_pk, rev, digest) VALUES (?, ?, ?)'),
    countRef: db.prepare<[number, number, string]>('UPDATE attachment_blobs SET refs = refs + ? WHERE db_id = ? AND digest = ?'),
    dropRefs: db.prepare<[number, string], string>('DELETE FROM attachment_refs WHERE doc_pk = ? AND rev = ? RETURNING digest').pluck(),
    unreferenced: db
      .prepare<[number, number], number>('DELETE FROM attachment_blobs WHERE db_id = ? AND refs = 0 AND created < ? RETURNING blob_id')
      .pluck(),
    deleteRefsOfDatabase: db.prepare<[number]>('DELETE FROM attachment_refs WHERE doc_pk IN (SELECT doc_pk FROM documents WHERE db_id = ?)'),
    deleteChunksOfDatabase: db.prepare<[number]>(
      'DELETE FROM attachment_chunks WHERE blob_id IN (SELECT blob_id FROM attachment_blobs WHERE db_id = ?)',
    ),
    deleteBlobsOfDatabase: db.prepare<[number]>('DELETE FROM attachment_blobs WHERE db_id = ?'),
  };
}

export type AttachmentStatements = ReturnType<typeof prepareAttachmentStatements>;

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

/** Removes data no body has named for longer than the grace period; answers how many blobs. */
export function sweepUnreferenced(st: AttachmentStatements, dbId: number, graceMs = UNREFERENCED_GRACE_MS): number {
  const blobs = st.unreferenced.all(dbId, Date.now() - graceMs);
  for (const blob of blobs) st.deleteChunks.run(blob);
  return blobs.length;
}

/** Everything of a deleted database. */
export function deleteAttachmentsOfDatabase(st: AttachmentStatements, dbId: number): void {
  st.deleteRefsOfDatabase.run(dbId);
  st.deleteChunksOfDatabase.run(dbId);
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
      finish: (blob, digest, length) =>
        queue.enqueue(() => {
          const dbId = st.dbOfBlob.get(blob)!;
          if (st.blobByDigest.get(dbId, digest) !== undefined) this.#drop(blob);
          else st.nameBlob.run(digest, length, blob);
        }),
      abandon: (blob) => queue.enqueue(() => this.#drop(blob)),
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

  #drop(blob: number): void {
    this.#st.deleteChunks.run(blob);
    this.#st.deleteBlob.run(blob);
  }
}
