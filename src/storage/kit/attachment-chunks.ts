/**
 * The attachment upload and download loops both backends share: a stream re-chunked into
 * `ATTACHMENT_CHUNK_SIZE` pieces a few chunks per transaction, ranges cut from chunks, and the
 * digests a stored body names (for the reference counts compaction reads).
 */
import { createHash, type Hash } from 'node:crypto';
import { ATTACHMENT_CHUNK_SIZE, CHUNKS_PER_WRITE, type ByteRange, type SavedAttachment } from '../attachment-store.js';

/** What a backend provides to `saveInChunks`; each call is its own transaction. */
export interface ChunkSink {
  /** A new, unnamed blob of database `db`: answers its id. */
  begin(db: string): Promise<number>;
  append(blob: number, firstIndex: number, chunks: Buffer[]): Promise<void>;
  /** Names the blob by its digest; when `db` already holds that digest, drops the blob instead. */
  finish(blob: number, digest: string, length: number): Promise<void>;
  /** Drops a blob whose upload failed. */
  abandon(blob: number): Promise<void>;
  /**
   * `begin`, `append` and `finish` in one transaction, for an attachment that fits in one write
   * (most do): one commit, so one fsync, instead of three. Optional: without it the three steps run.
   */
  whole?(db: string, chunks: Buffer[], digest: string, length: number): Promise<void>;
}

/** `md5-<base64>` as CouchDB writes digests. */
function digestOf(hash: Hash): string {
  return `md5-${hash.digest('base64')}`;
}

/** The shared upload loop: re-chunks `source` into `ATTACHMENT_CHUNK_SIZE` pieces, hashing as it goes. */
export async function saveInChunks(sink: ChunkSink, db: string, source: AsyncIterable<Buffer>, maxBytes: number, tooLarge: () => Error): Promise<SavedAttachment> {
  // Without a one-transaction `whole`, the blob is begun first (a missing database fails before any byte is read).
  let blob = sink.whole ? undefined : await sink.begin(db);
  const hash = createHash('md5');
  let length = 0;
  let index = 0;
  // The backend has copied a write's chunks once `append` resolves, so one set of buffers serves the
  // whole upload: memory stays at CHUNKS_PER_WRITE chunks whatever the attachment's size.
  const buffers = Array.from({ length: CHUNKS_PER_WRITE }, () => Buffer.allocUnsafe(ATTACHMENT_CHUNK_SIZE));
  let pending: Buffer[] = [];
  let current = buffers[0]!;
  let filled = 0;
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    blob ??= await sink.begin(db);
    await sink.append(blob, index, pending);
    index += pending.length;
    pending = [];
  };
  try {
    for await (const piece of source) {
      length += piece.length;
      if (length > maxBytes) throw tooLarge();
      hash.update(piece);
      let offset = 0;
      while (offset < piece.length) {
        const copied = piece.copy(current, filled, offset);
        offset += copied;
        filled += copied;
        if (filled === ATTACHMENT_CHUNK_SIZE) {
          pending.push(current);
          if (pending.length >= CHUNKS_PER_WRITE) await flush();
          current = buffers[pending.length]!;
          filled = 0;
        }
      }
    }
    if (filled > 0) pending.push(current.subarray(0, filled));
    const digest = digestOf(hash);
    if (blob === undefined && sink.whole) {
      await sink.whole(db, pending, digest, length);
      return { digest, length };
    }
    await flush();
    blob ??= await sink.begin(db);
    await sink.finish(blob, digest, length);
    return { digest, length };
  } catch (error) {
    if (blob !== undefined) await sink.abandon(blob).catch(() => undefined);
    throw error;
  }
}

/** The chunk indexes and offsets a range covers. */
function chunkSpan(length: number, range: ByteRange | undefined): { first: number; last: number; skip: number; take: number } {
  const start = range?.start ?? 0;
  const end = range?.end ?? length - 1;
  return { first: Math.floor(start / ATTACHMENT_CHUNK_SIZE), last: Math.floor(end / ATTACHMENT_CHUNK_SIZE), skip: start % ATTACHMENT_CHUNK_SIZE, take: end - start + 1 };
}

/** Yields the chunks `fetch` answers for a span, cut to the range. */
export async function* chunksOf(length: number, range: ByteRange | undefined, fetch: (index: number) => Promise<Buffer | undefined>): AsyncIterable<Buffer> {
  if (length === 0) return;
  const span = chunkSpan(length, range);
  let remaining = span.take;
  for (let index = span.first; index <= span.last && remaining > 0; index++) {
    const chunk = await fetch(index);
    if (chunk === undefined) throw new Error('attachment data went missing while being read');
    const part = index === span.first ? chunk.subarray(span.skip) : chunk;
    const out = part.length > remaining ? part.subarray(0, remaining) : part;
    remaining -= out.length;
    yield out;
  }
}

/** The digests a stored body's `_attachments` names (deduplicated); [] for most bodies, cheaply. */
export function digestsOfBody(body: string): string[] {
  if (!body.includes('"_attachments"')) return [];
  const parsed = JSON.parse(body) as { _attachments?: Record<string, { digest?: unknown }> };
  const atts = parsed._attachments;
  if (atts === null || typeof atts !== 'object') return [];
  const digests = new Set<string>();
  for (const att of Object.values(atts)) if (att && typeof att.digest === 'string') digests.add(att.digest);
  return [...digests];
}
