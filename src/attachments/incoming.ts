/**
 * The `_attachments` of a document on its way in, turned into the stubs a revision body keeps:
 * inline base64 `data` and `follows` parts are streamed into the attachment store, `stub: true`
 * entries are taken from the revision being edited (new_edits=true) or from the nearest stored
 * ancestor of the replicated path (new_edits=false), as CouchDB does. A stub is only ever resolved
 * by name against a revision of the same document, never by a digest the client names, so nobody
 * reaches data through a document they could not read.
 */
import { isObject } from '../documents/document-json.js';
import { isStorableText } from '../json/json.js';
import type { JsonObject } from '../json/json.js';
import {
  invalidAttachmentContentType,
  attachmentNameNotUtf8,
  attachmentNameUnderscore,
  attachmentNotObject,
  attachmentTooLarge,
  followsDigestMismatch,
  followsWithoutParts,
  invalidAttachmentData,
  missingStub,
  previousRevisionMissing,
} from '../errors/attachment-errors.js';
import { decoded, gzipped, isCompressible, type CompressionSettings } from './encoding.js';
import type { DocumentEdit, Storage, StoredRevision } from '../storage/storage.js';

/** A stub as stored in a revision body, in CouchDB's member order. */
export interface StoredStub {
  content_type: string;
  revpos: number;
  digest: string;
  length: number;
  stub: true;
  /** Present when stored gzip-compressed: `digest` and `encoded_length` are then of the stored bytes. */
  encoding?: 'gzip';
  encoded_length?: number;
}

/** Where the bytes of `follows: true` attachments come from (a multipart/related body). */
export type FollowsSource = (name: string) => Promise<AsyncIterable<Buffer> | undefined>;

interface IncomingContext {
  storage: Storage;
  db: string;
  maxAttachmentSize: number;
  compression: CompressionSettings;
  /** The stored winner (deleted too) when already read, for the generation of a recreated document. */
  winner?: StoredRevision;
  follows?: FollowsSource;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** CouchDB's attachment name rules: UTF-8, no leading `_`. */
export function validateAttachmentName(name: string): string {
  if (!isStorableText(name)) throw attachmentNameNotUtf8();
  if (name.startsWith('_')) throw attachmentNameUnderscore(name);
  return name;
}

function generation(rev: string): number {
  return Number.parseInt(rev, 10);
}

/** The generation the edit's new revision will have. */
function newGeneration(edit: DocumentEdit, winner: StoredRevision | undefined): number {
  if (edit.revPath !== undefined) return generation(edit.revPath[0]!);
  if (edit.baseRev !== undefined) return generation(edit.baseRev) + 1;
  return winner?.deleted ? generation(winner.rev) + 1 : 1;
}

/** The stored revision stubs are taken from: the edited one, or the nearest stored ancestor. */
async function stubSource(context: IncomingContext, edit: DocumentEdit): Promise<StoredRevision | undefined> {
  const candidates = edit.revPath !== undefined ? edit.revPath.slice(1) : edit.baseRev !== undefined ? [edit.baseRev] : [];
  for (const rev of candidates) {
    const found = await context.storage.readDocument(context.db, edit.id, { rev });
    if (found !== undefined) return found;
  }
  return undefined;
}

function oneChunk(bytes: Buffer): AsyncIterable<Buffer> {
  return (async function* () {
    yield bytes;
  })();
}

/** A stub as saved, with the digest of the data as it arrived (to check a digest the sender names). */
type Saved = StoredStub & { arrivedDigest: string };

async function saved(context: IncomingContext, name: string, source: AsyncIterable<Buffer>, contentType: string, revpos: number): Promise<Saved> {
  const tooLarge = (): Error => attachmentTooLarge(name);
  if (!isCompressible(context.compression, contentType)) {
    const { digest, length } = await context.storage.attachments.save(context.db, source, context.maxAttachmentSize, tooLarge);
    return { content_type: contentType, revpos, digest, length, stub: true, arrivedDigest: digest };
  }
  // The limit is on the bytes sent; gzip may make incompressible data a little larger.
  const gzip = gzipped(source, context.compression.level, context.maxAttachmentSize, tooLarge);
  const { digest, length } = await context.storage.attachments.save(context.db, gzip.data, Number.MAX_SAFE_INTEGER, tooLarge);
  const stub: StoredStub = { content_type: contentType, revpos, digest, length: gzip.identityLength(), stub: true, encoding: 'gzip', encoded_length: length };
  return { ...stub, arrivedDigest: gzip.identityDigest() };
}

/**
 * A `follows` part sent gzip-encoded (CouchDB sends what it stores compressed as stored): kept as
 * sent, as CouchDB keeps it, so its digest (the MD5 of these bytes) is the sender's and a
 * replication back finds the same attachment. `length` is the decoded length the stub names.
 */
async function savedEncoded(context: IncomingContext, name: string, source: AsyncIterable<Buffer>, contentType: string, revpos: number, claimedLength: unknown): Promise<Saved> {
  const { digest, length } = await context.storage.attachments.save(context.db, source, context.maxAttachmentSize, () => attachmentTooLarge(name));
  const decodedLength = Number.isSafeInteger(claimedLength) && (claimedLength as number) >= 0 ? (claimedLength as number) : length;
  return { content_type: contentType, revpos, digest, length: decodedLength, stub: true, encoding: 'gzip', encoded_length: length, arrivedDigest: digest };
}

/**
 * Resolves `edit.body._attachments` into stored stubs (an empty result drops the member): the
 * edit's body is changed in place and the stubs are answered. A deletion keeps no attachments.
 */
export async function resolveAttachments(context: IncomingContext, edit: DocumentEdit): Promise<Record<string, StoredStub>> {
  const raw = edit.body['_attachments'];
  delete edit.body['_attachments'];
  const resolved: Record<string, StoredStub> = {};
  if (raw === undefined || raw === null || edit.deleted) return resolved;
  if (!isObject(raw)) throw attachmentNotObject();
  const revpos = newGeneration(edit, context.winner);
  let source: Promise<StoredRevision | undefined> | undefined;
  const fromStub = async (name: string): Promise<StoredStub> => {
    source ??= stubSource(context, edit);
    const from = await source;
    if (from === undefined) throw previousRevisionMissing(edit.id);
    const stub = storedStubs(from.body)[name];
    if (stub === undefined) throw missingStub(edit.id, name);
    return stub;
  };
  // Every entry is checked before any is saved, so no save is left running when one is refused.
  const entries = Object.entries(raw).map(([name, value]) => checkedEntry(name, value));
  // Inline data is saved concurrently (one transaction for a hundred small attachments); `follows`
  // parts come one after the other from the request, so they are read in order.
  let parts: Promise<unknown> = Promise.resolve();
  // A replicated revision keeps each attachment's `revpos` (the generation that added it), as CouchDB.
  const posOf = (given: unknown): number => (edit.revPath !== undefined && Number.isInteger(given) && (given as number) >= 1 && (given as number) <= revpos ? (given as number) : revpos);
  const pending = entries.map(({ name, contentType, kind, encoding, revpos: given, digest, length }): [string, Promise<StoredStub>] => {
    if (kind === 'stub') return [name, fromStub(name)];
    if (kind !== 'follows') return [name, saved(context, name, oneChunk(kind), contentType, posOf(given)).then(withoutArrived)];
    const part = parts.then(async () => {
      const body = await context.follows?.(name);
      if (body === undefined) throw followsWithoutParts();
      const stub = encoding === 'gzip' ? await savedEncoded(context, name, body, contentType, posOf(given), length) : await saved(context, name, decoded(body, encoding), contentType, posOf(given));
      return verified(name, stub, digest);
    });
    parts = part.catch(() => undefined);
    return [name, part];
  });
  const settled = await Promise.allSettled(pending.map(([, stub]) => stub));
  const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
  pending.forEach(([name], i) => (resolved[name] = (settled[i] as PromiseFulfilledResult<StoredStub>).value));
  if (Object.keys(resolved).length > 0) edit.body['_attachments'] = resolved as unknown as JsonObject;
  return resolved;
}

/**
 * A `follows` part must be the data its stub names: parts are paired with attachments by order, and
 * a wrong pairing (or damage on the way) must fail the write rather than store one attachment's bytes
 * under another's name. As CouchDB's `check_md5`, the digest named is compared with the MD5 of the
 * bytes as they arrived (the gzip bytes of an encoded part, the data before Divan compresses it).
 */
function verified(name: string, saved: Saved, claimed: unknown): StoredStub {
  if (typeof claimed === 'string' && claimed.startsWith('md5-') && claimed !== saved.arrivedDigest) throw followsDigestMismatch(name);
  return withoutArrived(saved);
}

function withoutArrived({ arrivedDigest: _arrived, ...stub }: Saved): StoredStub {
  return stub;
}

/** Bytes Node refuses in a header value (`checkInvalidHeaderChar`). */
const HEADER_UNSAFE = /[^\t\x20-\x7e\x80-\xff]/;

/** True when `value` can be sent as an HTTP header value as it is. */
export function isHeaderSafe(value: string): boolean {
  return !HEADER_UNSAFE.test(value);
}

/** One `_attachments` entry, checked: a stub, a `follows` part, or decoded inline data. */
function checkedEntry(name: string, value: unknown): { name: string; contentType: string; kind: 'stub' | 'follows' | Buffer; encoding?: unknown; revpos?: unknown; digest?: unknown; length?: unknown } {
  validateAttachmentName(name);
  if (!isObject(value)) throw attachmentNotObject();
  const contentType = typeof value['content_type'] === 'string' ? value['content_type'] : 'application/octet-stream';
  if (!isHeaderSafe(contentType)) throw invalidAttachmentContentType(name);
  if (value['stub'] === true) return { name, contentType, kind: 'stub' };
  if (typeof value['data'] === 'string') {
    const text = value['data'].replace(/\s+/g, '');
    if (!BASE64.test(text) || text.length % 4 === 1) throw invalidAttachmentData(name);
    return { name, contentType, kind: Buffer.from(text, 'base64'), revpos: value['revpos'] };
  }
  if (value['follows'] !== true) throw invalidAttachmentData(name);
  // CouchDB's replicator sends an attachment CouchDB stores gzipped as it is stored (`encoding`).
  return { name, contentType, kind: 'follows', encoding: value['encoding'], revpos: value['revpos'], digest: value['digest'], length: value['length'] };
}

/** The stubs a stored body names (`{}` when none). */
export function storedStubs(body: JsonObject): Record<string, StoredStub> {
  const atts = body['_attachments'];
  return isObject(atts) ? (atts as unknown as Record<string, StoredStub>) : {};
}
