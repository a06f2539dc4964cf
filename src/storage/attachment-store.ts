/**
 * Attachment bytes, stored apart from revision bodies: in chunks, content-addressed per database by
 * MD5 (CouchDB's `digest`), so a revision that keeps an attachment as a stub shares its bytes with
 * the revision it came from. A revision body names its attachments in `_attachments` (stubs with
 * `digest`); the backend counts, in the revision's own transaction, how many stored bodies name
 * each digest, and compaction removes the data no body names any more.
 *
 * Neither way holds an attachment whole in memory: `save` takes a stream and writes it a few
 * chunks per transaction, `read` answers chunks one at a time.
 */
/** Bytes per stored chunk. */
export const ATTACHMENT_CHUNK_SIZE = 256 * 1024;
/** Chunks written per transaction while an attachment streams in (4 MiB: a few fsyncs per 64 MiB). */
export const CHUNKS_PER_WRITE = 16;
/**
 * Data no stored body names is kept this long before compaction may remove it, so that an upload
 * whose revision is being written is never removed under it.
 */
export const UNREFERENCED_GRACE_MS = 60 * 60 * 1000;

export interface SavedAttachment {
  /** `md5-<base64>` of the bytes. */
  digest: string;
  length: number;
}

/** Inclusive byte range, as HTTP `Range` names it. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface AttachmentStore {
  /**
   * Streams `source` into database `db`; past `maxBytes` stops reading and rejects with `tooLarge()`.
   * The data is not part of the database until a revision body names its digest.
   * Rejects with a not-found CouchError when the database does not exist.
   */
  save(db: string, source: AsyncIterable<Buffer>, maxBytes: number, tooLarge: () => Error): Promise<SavedAttachment>;
  /** Whether `digest` is stored in `db` (a body may then name it). */
  has(db: string, digest: string): Promise<boolean>;
  /** The bytes of `digest` (or a range of them), a chunk at a time; undefined when not stored. */
  read(db: string, digest: string, range?: ByteRange): Promise<AsyncIterable<Buffer> | undefined>;
}
