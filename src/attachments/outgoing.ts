/**
 * Attachments on the way out as JSON: `?attachments=true` replaces the stubs of a rendered document
 * by base64 `data` (CouchDB's member order: content_type, revpos, digest, data), except, with
 * `atts_since`, those the client already has: revpos at or below the newest of the named
 * revisions that is an ancestor of the document's.
 */
import { isObject } from '../documents/document-json.js';
import type { JsonObject } from '../json/json.js';
import type { AttachmentStore } from '../storage/attachment-store.js';
import type { StoredRevision } from '../storage/storage.js';
import { decoded } from './encoding.js';

/** The generation below which attachments are left as stubs (0: none). */
export function sinceGeneration(stored: StoredRevision, attsSince: readonly string[] | undefined): number {
  let since = 0;
  for (const rev of attsSince ?? []) {
    const dash = rev.indexOf('-');
    const generation = Number.parseInt(rev.slice(0, dash), 10);
    const position = stored.revisionStart - generation;
    if (position >= 0 && stored.revisionPath[position] === rev.slice(dash + 1)) since = Math.max(since, generation);
  }
  return since;
}

async function base64Of(chunks: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts).toString('base64');
}

/** The document with the data of its attachments newer than `since` inlined. */
export async function inlineAttachments(store: AttachmentStore, db: string, doc: JsonObject, since: number): Promise<JsonObject> {
  const atts = doc['_attachments'];
  if (!isObject(atts)) return doc;
  const inlined: JsonObject = {};
  for (const [name, stub] of Object.entries(atts)) {
    if (!isObject(stub) || typeof stub['digest'] !== 'string' || Number(stub['revpos']) <= since) {
      inlined[name] = stub;
      continue;
    }
    const data = await store.read(db, stub['digest']);
    if (data === undefined) {
      inlined[name] = stub;
      continue;
    }
    inlined[name] = { content_type: stub['content_type'] ?? 'application/octet-stream', revpos: stub['revpos'] ?? 0, digest: stub['digest'], data: await base64Of(decoded(data, stub['encoding'])) };
  }
  return { ...doc, _attachments: inlined };
}

/** An attachment sent as its own part after the document (`Accept: multipart/related`). */
export interface FollowingPart {
  name: string;
  contentType: string;
  digest: string;
  /** The length of the part: the stored (encoded) length. */
  length: number;
  /** `gzip` when stored compressed: the part is the stored bytes, sent with `Content-Encoding: gzip`, as CouchDB. */
  encoding?: string;
}

/**
 * The document for a `multipart/related` answer: attachments newer than `since` become
 * `{content_type, revpos, digest, length, follows: true}` (plus `encoding` and `encoded_length`
 * when stored gzip-compressed) and are listed, in order, as the parts that follow; the others stay
 * stubs. As CouchDB (`SendEncodedAtts`), a compressed attachment travels as stored, so its digest
 * (the MD5 of the stored bytes) stays true of the bytes sent and a receiver keeps both.
 */
export function withFollows(doc: JsonObject, since: number): { doc: JsonObject; parts: FollowingPart[] } {
  const atts = doc['_attachments'];
  if (!isObject(atts)) return { doc, parts: [] };
  const parts: FollowingPart[] = [];
  const marked: JsonObject = {};
  for (const [name, stub] of Object.entries(atts)) {
    if (!isObject(stub) || typeof stub['digest'] !== 'string' || Number(stub['revpos']) <= since) {
      marked[name] = stub;
      continue;
    }
    const contentType = typeof stub['content_type'] === 'string' ? stub['content_type'] : 'application/octet-stream';
    const length = Number(stub['length'] ?? 0);
    const encoding = typeof stub['encoding'] === 'string' ? stub['encoding'] : undefined;
    const encodedLength = Number(stub['encoded_length'] ?? length);
    parts.push({ name, contentType, digest: stub['digest'], ...(encoding === undefined ? { length } : { length: encodedLength, encoding }) });
    const follows = { content_type: contentType, revpos: stub['revpos'] ?? 0, digest: stub['digest'], length, follows: true };
    marked[name] = encoding === undefined ? follows : { ...follows, encoding, encoded_length: encodedLength };
  }
  return { doc: { ...doc, _attachments: marked }, parts };
}
