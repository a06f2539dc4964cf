import { randomHex } from '../crypto/crypto.js';
import { isObject, parseRev, toEdit } from '../documents/document-json.js';
import { conflict, documentMissing, notADbOrServerAdmin } from '../errors/catalog.js';
import { CouchError } from '../errors/couch-error.js';
import type { JsonObject } from '../json/json.js';
import type { DocumentEdit, EditResult } from '../storage/storage.js';
import type { OpenedDatabase } from './opened-database.js';
import type { FollowsSource } from '../attachments/incoming.js';
import { attachmentsOf, keepStubs, withStubs } from './attachment-writes.js';
import { documentLimits } from './settings.js';
import { requireNamedLeaf, updateSteps } from './update-steps.js';
import { isValidated, proposedOf } from './validate-edits.js';

export interface WriteOptions {
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

/** Design documents change what a database does, so only its admins may write them (every database). */
export function designRefusal(opened: OpenedDatabase, id: string): CouchError | undefined {
  return id.startsWith('_design/') && !opened.caller.isAdmin ? notADbOrServerAdmin() : undefined;
}

/** A live design document must work: every hook may refuse it (functions that do not compile). */
export async function checkDesign(opened: OpenedDatabase, edit: DocumentEdit): Promise<void> {
  if (!edit.id.startsWith('_design/') || edit.deleted) return;
  for (const hooks of opened.hooks) await hooks.checkDesign?.({ _id: edit.id, ...edit.body });
}

/** A body without `_id` gets a generated one (POST, `_bulk_docs` with new edits). */
export function withGeneratedId(body: unknown): unknown {
  return isObject(body) && !('_id' in body) ? Object.fromEntries([['_id', randomHex()], ...Object.entries(body)]) : body;
}

/** Tells the database's hooks which documents a durable write changed. */
export async function announceWritten(opened: OpenedDatabase, results: readonly EditResult[]): Promise<void> {
  const ids = results.filter((result) => result.ok).map((result) => result.id);
  if (ids.length > 0) await opened.context.hooks.afterWrite({ db: opened.db, ids });
}

/**
 * One document written by the caller, through the hooks: access, the conflict pre-check, every
 * `beforeDocUpdate` step, the design-document rule, storage, then `afterWrite`.
 */
export async function writeDocument(opened: OpenedDatabase, body: unknown, options: WriteOptions): Promise<{ id: string; rev: string }> {
  const { newEdits } = options;
  // Where a hook's access rule decides per document (the users database), the path's id replaces
  // the body's, as it always has there (and in CouchDB); elsewhere a different body `_id` is a 400.
  if (options.id !== undefined && isObject(body) && opened.hooks.some((hooks) => hooks.access)) body = { ...body, _id: options.id };
  const { edit, rev } = toEdit(body, options);
  if (edit.id.startsWith('_local/')) return { id: edit.id, rev: throwIfRefused(await opened.writeLocal(edit.id, edit.body, rev, edit.deleted)) };
  const steps = await updateSteps(opened);
  const checked = newEdits && (steps.step !== undefined || (steps.validate !== undefined && isValidated(edit.id)));
  const needsStored = !opened.caller.isMember || options.mustExist === true || checked;
  const stored = needsStored ? await steps.stored(edit.id) : undefined;
  opened.requireUpdateAccess(edit.id, stored !== undefined && !stored.deleted);
  if (options.mustExist && !stored) throw documentMissing();
  if (checked) requireNamedLeaf(stored, rev === undefined ? {} : { _rev: rev });
  let final = edit;
  if (steps.step) {
    const sent = Object.entries(body as JsonObject);
    const doc = Object.fromEntries([...sent, ['_id', edit.id], ...(rev === undefined ? [] : [['_rev', rev]])]) as JsonObject;
    const stubs = await attachmentsOf(opened, edit, () => steps.stored(edit.id), options.follows);
    final = keepStubs(toEdit(await steps.step(withStubs(doc, stubs)), { newEdits }).edit, stubs);
  } else {
    await attachmentsOf(opened, edit, () => steps.stored(edit.id), options.follows);
  }
  const refusal = designRefusal(opened, final.id);
  if (refusal) throw refusal;
  await checkDesign(opened, final);
  if (steps.validate && isValidated(final.id)) {
    const [refused] = await steps.validate([await proposedOf(opened, final, steps.stored)]);
    if (refused) throw refused;
  }
  const [result] = await opened.storage.writeDocuments(opened.db, [final], { newEdits, limits: documentLimits(opened.context.config) });
  await announceWritten(opened, [result!]);
  return { id: final.id, rev: throwIfRefused(result!) };
}

/** `DELETE /{db}/{id}?rev=`: a tombstone written as any other edit (so through the same hooks). */
export async function deleteDocument(opened: OpenedDatabase, id: string, rev: string | undefined): Promise<{ id: string; rev: string }> {
  if (rev === undefined) throw conflict();
  return writeDocument(opened, { _id: id, _rev: parseRev(rev), _deleted: true }, { newEdits: true, mustExist: true });
}
