/**
 * Standalone attachments (`/{db}/{doc}/{name}`): a read through the same access rules and
 * `afterDocRead` view as the document that holds it; a write or delete is a new revision of that
 * document written through `writeDocument`, so every hook (and the design-document rule) applies.
 */
import { storedStubs, validateAttachmentName, type FollowsSource, type StoredStub } from '../attachments/incoming.js';
import { parseRev } from '../documents/document-json.js';
import { attachmentMissing, formWithoutDocument, namedRevisionMissing } from '../errors/attachment-errors.js';
import { badRequest, conflict, documentDeleted, documentMissing } from '../errors/catalog.js';
import type { JsonObject } from '../json/json.js';
import type { ByteRange, StoredRevision } from '../storage/storage.js';
import { writeDocument } from './document-writes.js';
import type { OpenedDatabase } from './opened-database.js';

export interface OpenedAttachment {
  /** The revision of the document it was read from. */
  rev: string;
  stub: StoredStub;
  /** The bytes, or a range of them, a chunk at a time. */
  read(range?: ByteRange): Promise<AsyncIterable<Buffer>>;
}

/** One attachment of a document revision (default: the winner) as the caller may see it. */
export async function openAttachment(opened: OpenedDatabase, id: string, name: string, rev: string | undefined): Promise<OpenedAttachment> {
  opened.requireReadAccess(id);
  const stored = await opened.storage.readDocument(opened.db, id, rev === undefined ? {} : { rev: parseRev(rev) });
  if (!stored) throw documentMissing();
  if (stored.deleted && rev === undefined) throw documentDeleted();
  const shown = opened.shown(stored, { attEncodingInfo: true });
  const stub = storedStubs(shown)[name];
  if (stub === undefined) throw attachmentMissing();
  return {
    rev: stored.rev,
    stub,
    read: async (range) => {
      const data = await opened.storage.attachments.read(opened.db, stub.digest, range);
      if (data === undefined) throw attachmentMissing();
      return data;
    },
  };
}

/** The revision a standalone write edits: the named one, or none for a new (or deleted) document. */
async function editedRevision(opened: OpenedDatabase, id: string, rev: string | undefined): Promise<StoredRevision | undefined> {
  if (rev === undefined) {
    const winner = await opened.storage.readDocument(opened.db, id);
    // As CouchDB: a live document is edited only by naming its revision.
    if (winner && !winner.deleted) throw conflict();
    return undefined;
  }
  const stored = await opened.storage.readDocument(opened.db, id, { rev: parseRev(rev) });
  if (!stored) throw namedRevisionMissing();
  return stored;
}

/** The document to write: the edited revision's body with its attachments as stubs, changed by `change`. */
function editedDocument(id: string, rev: string | undefined, base: StoredRevision | undefined, change: (atts: Record<string, JsonObject>) => void): JsonObject {
  const body: JsonObject = base && !base.deleted ? { ...base.body } : {};
  const atts: Record<string, JsonObject> = { ...(storedStubs(body) as unknown as Record<string, JsonObject>) };
  delete body['_attachments'];
  change(atts);
  return { _id: id, ...(rev === undefined ? {} : { _rev: rev }), ...body, ...(Object.keys(atts).length > 0 ? { _attachments: atts } : {}) };
}

/** `PUT /{db}/{doc}/{name}`: the body becomes the attachment, streamed into storage. */
export async function putAttachment(
  opened: OpenedDatabase,
  target: { id: string; name: string; rev: string | undefined; encoding?: 'gzip' },
  contentType: string,
  source: AsyncIterable<Buffer>,
): Promise<{ id: string; rev: string }> {
  const { id, name, rev } = target;
  validateAttachmentName(name);
  const base = await editedRevision(opened, id, rev);
  const doc = editedDocument(id, rev, base, (atts) => {
    atts[name] = { content_type: contentType, follows: true, ...(target.encoding ? { encoding: target.encoding } : {}) };
  });
  let used = false;
  const follows = async (asked: string): Promise<AsyncIterable<Buffer> | undefined> => {
    if (asked !== name || used) return undefined;
    used = true;
    return source;
  };
  return writeDocument(opened, doc, { id, newEdits: true, follows });
}

/** `DELETE /{db}/{doc}/{name}?rev=`: a new revision without the attachment. */
export async function deleteAttachment(opened: OpenedDatabase, id: string, name: string, rev: string | undefined): Promise<{ id: string; rev: string }> {
  if (rev === undefined) {
    // As CouchDB: without a revision, a missing document or attachment is a 404 before the 409.
    opened.requireReadAccess(id);
    const winner = await opened.storage.readDocument(opened.db, id);
    if (!winner) throw documentMissing();
    if (winner.deleted) throw documentDeleted();
    if (!(name in storedStubs(winner.body))) throw attachmentMissing();
    throw conflict();
  }
  const base = await editedRevision(opened, id, rev);
  if (!base || base.deleted) throw documentMissing();
  const doc = editedDocument(id, rev, base, (atts) => {
    if (!(name in atts)) throw attachmentMissing();
    delete atts[name];
  });
  return writeDocument(opened, doc, { id, newEdits: true });
}

/**
 * A document read from this database, ready to be written under another id (`COPY`): its stubs
 * become `follows` entries whose bytes stream from the stored data, as stored (gzip ones keep their
 * encoding and digest), since a stub is only ever resolved against a revision of its own document.
 */
export function copiedAttachments(opened: OpenedDatabase, doc: JsonObject): { body: JsonObject; follows: FollowsSource } {
  const stubs = storedStubs(doc);
  const body: JsonObject = { ...doc };
  if (Object.keys(stubs).length > 0) {
    body['_attachments'] = Object.fromEntries(
      Object.entries(stubs).map(([name, { stub: _stub, revpos: _revpos, ...kept }]) => [name, { ...kept, follows: true }]),
    ) as unknown as JsonObject;
  }
  const follows: FollowsSource = async (name) => {
    const stub = stubs[name];
    return stub === undefined ? undefined : opened.attachmentData(stub.digest);
  };
  return { body, follows };
}

/** A file of a form upload, already saved in the attachment store as sent. */
export interface UploadedFile {
  name: string;
  contentType: string;
  digest: string;
  length: number;
}

/**
 * The document a form upload writes (CouchDB's form POST): the revision named by the `_rev` field
 * (or the `_doc` field's JSON) with each uploaded file as an attachment of its file name, replacing
 * one of that name; the bytes are taken from the store, where they were saved as they arrived.
 */
export async function formUploadDocument(
  opened: OpenedDatabase,
  id: string,
  fields: ReadonlyMap<string, string>,
  files: readonly UploadedFile[],
): Promise<{ body: JsonObject; follows: FollowsSource }> {
  let body: JsonObject;
  const docField = fields.get('_doc');
  const rev = fields.get('_rev');
  if (docField !== undefined) {
    const parsed: unknown = parsedJson(docField);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badRequest('Document must be a JSON object');
    body = parsed as JsonObject;
  } else if (rev !== undefined) {
    body = (await opened.readDocument(id, rev, {})).doc;
  } else {
    throw formWithoutDocument();
  }
  const atts: Record<string, JsonObject> = { ...(storedStubs(body) as unknown as Record<string, JsonObject>) };
  for (const file of files) {
    atts[validateAttachmentName(file.name)] = { content_type: file.contentType, digest: file.digest, length: file.length, follows: true };
  }
  const byName = new Map(files.map((file) => [file.name, file.digest]));
  const follows: FollowsSource = async (name) => {
    const digest = byName.get(name);
    return digest === undefined ? undefined : opened.attachmentData(digest);
  };
  const { _attachments: _old, ...rest } = body;
  return { body: { ...rest, ...(Object.keys(atts).length > 0 ? { _attachments: atts } : {}) }, follows };
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('invalid UTF-8 JSON');
  }
}
