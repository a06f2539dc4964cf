import { uuids } from '../crypto/uuids.js';
import { isObject, parseRev } from '../documents/document-json.js';
import { conflict } from '../errors/catalog.js';
import { CouchError } from '../errors/couch-error.js';
import type { EditResult } from '../storage/storage.js';
import type { FollowsSource } from '../attachments/incoming.js';
import type { OpenedDatabase } from './opened-database.js';
import { writeBatch } from './write-pipeline.js';

interface WriteOptions {
  /** The id of the path (PUT); otherwise the body's `_id`, or a generated one (POST). */
  id?: string;
  /** The revision of the query or `If-Match`; must agree with the body's `_rev`. */
  rev?: string;
  newEdits: boolean;
  /** DELETE: a document that never existed is 404 rather than a conflict. */
  mustExist?: boolean;
  /** The parts of a multipart/related body, for `follows: true` attachments. */
  follows?: FollowsSource;
}

/** The revision a write stored; a refused one (a conflict, a document too large) is thrown. */
export function throwIfRefused(result: EditResult): string {
  if (result.ok) return result.rev;
  // The storage built the reason from the catalog (tooManyLeaves, tooManyRevisions).
  throw result.error === 'conflict' ? conflict() : new CouchError(413, result.error, result.reason);
}

/** A body without `_id` gets a generated one (POST, `_bulk_docs` with new edits). */
export function withGeneratedId(body: unknown): unknown {
  return isObject(body) && !('_id' in body) ? Object.fromEntries([['_id', uuids.next()], ...Object.entries(body)]) : body;
}

/** One document written by the caller: a batch of one through the write pipeline (write-pipeline.ts), its refusal thrown. */
export async function writeDocument(opened: OpenedDatabase, body: unknown, options: WriteOptions): Promise<{ id: string; rev: string }> {
  // Where a hook's access rule decides per document (the users database), the path's id replaces
  // the body's, as it always has there (and in CouchDB); elsewhere a different body `_id` is a 400.
  if (options.id !== undefined && isObject(body) && opened.hooks.some((hooks) => hooks.access)) body = { ...body, _id: options.id };
  const item = { body, ...(options.id === undefined ? {} : { id: options.id }), ...(options.rev === undefined ? {} : { rev: options.rev }) };
  const [outcome] = await writeBatch(opened, [item], {
    newEdits: options.newEdits,
    ...(options.mustExist ? { mustExist: true } : {}),
    ...(options.follows ? { follows: options.follows } : {}),
  });
  if ('refused' in outcome!) throw outcome.refused;
  return { id: outcome!.id, rev: throwIfRefused('local' in outcome! ? outcome.local : outcome!.result) };
}

/** `DELETE /{db}/{id}?rev=`: a tombstone written as any other edit (so through the same hooks). */
export async function deleteDocument(opened: OpenedDatabase, id: string, rev: string | undefined): Promise<{ id: string; rev: string }> {
  if (rev === undefined) throw conflict();
  return writeDocument(opened, { _id: id, _rev: parseRev(rev), _deleted: true }, { newEdits: true, mustExist: true });
}
