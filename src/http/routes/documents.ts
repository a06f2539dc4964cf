import { isDbAdmin, isServerAdmin, requireDbAdmin } from '../../identity/authorization.js';
import { randomHex } from '../../crypto/crypto.js';
import { renderRevision, toEdit, validateDocumentId, isValidRev } from '../../documents/document-json.js';
import { isCouchError } from '../../errors/couch-error.js';
import { badRequest, conflict, documentDeleted, documentMissing, methodNotAllowed, notFound } from '../../errors/catalog.js';
import { CouchError } from '../../errors/couch-error.js';
import type { DocumentEdit, EditResult, JsonObject, SecurityObject } from '../../storage/storage.js';
import { booleanParam } from '../query.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';
import { absoluteUrl, documentPath } from '../urls.js';
import { openAsMember, securityOf } from './database-access.js';
import { userDocument, writeUserDocument } from './users.js';
import { databaseName, documentLimits, maxDocumentSize } from './databases.js';
import { LoopTurns } from '../event-loop.js';
import { openRevsReply, readBulkJson } from './replication.js';
import { unrunValidationRefusal } from '../../databases/unrun-validation.js';

/** The document id a path names: `/{db}/{id}`, `/{db}/_design/{name}`, `/{db}/_local/{name}`. */
export function documentIdOf(request: Request): string {
  const [, first, second, ...rest] = request.segments as string[];
  if (rest.length > 0) throw notFound('missing');
  if (first === '_design' || first === '_local') {
    if (second === undefined || second === '') throw notFound('missing');
    // The same rules as any other id (no NUL, which PostgreSQL cannot even compare with).
    return validateDocumentId(`${first}/${second}`);
  }
  if (second !== undefined) throw notFound('missing');
  return validateDocumentId(first);
}

/** Design documents change what a database does, so only its admins may write them. */
function requireWriter(request: Request, security: SecurityObject, id: string): void {
  if (id.startsWith('_design/')) requireDbAdmin(request.userCtx, security);
}

/** Fails closed while validate_doc_update functions cannot run (see databases/unrun-validation.ts). */
async function requireValidationNotNeeded(request: Request, services: Services, db: string, security: SecurityObject): Promise<void> {
  const refusal = await unrunValidationRefusal(services.storage, db, request.userCtx, security);
  if (refusal) throw refusal;
}

function throwIfConflict(result: EditResult): string {
  if (!result.ok) throw conflict();
  return result.rev;
}

/** The revision a write stored; a refused one (a conflict, a document too large) is thrown. */
function throwIfRefused(result: EditResult): string {
  if (result.ok) return result.rev;
  // The storage built the reason from the catalog (tooManyLeaves, tooManyRevisions).
  throw result.error === 'conflict' ? conflict() : new CouchError(413, result.error, result.reason);
}

function revisionFrom(request: Request): string | undefined {
  const fromQuery = request.query.get('rev') ?? undefined;
  const ifMatch = request.header('if-match')?.replace(/^"|"$/g, '');
  if (fromQuery !== undefined && ifMatch !== undefined && fromQuery !== ifMatch) {
    throw badRequest('Document rev from request body and query string have different values');
  }
  return fromQuery ?? ifMatch;
}

function written(request: Request, db: string, id: string, rev: string, status = 201): Reply {
  return json(status, { ok: true, id, rev }, { ETag: `"${rev}"`, Location: absoluteUrl(request, documentPath(db, id)) });
}

/** `/{db}/{docid}` and `/{db}/_design/{name}`: read, write, delete one document. */
export async function document(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  const id = documentIdOf(request);
  if (id.startsWith('_local/')) return localDocument(request, services, db, id);
  // `open_revs` (replication reads) has its own access path, users-db rules included.
  const openRevs = request.method === 'GET' || request.method === 'HEAD' ? request.query.get('open_revs') : null;
  if (openRevs !== null) return openRevsReply(request, services, db, id, openRevs);
  if (services.users.isUsersDb(db)) return userDocument(request, services, db, id);
  const security = await openAsMember(services.storage, db, request.userCtx);
  switch (request.method) {
    case 'GET':
    case 'HEAD':
      return readDocument(request, services, db, id);
    case 'PUT': {
      requireWriter(request, security, id);
      await requireValidationNotNeeded(request, services, db, security);
      const newEdits = booleanParam(request.query, 'new_edits', true);
      const { edit } = toEdit(await request.json(maxDocumentSize(services)), { id, rev: revisionFrom(request), newEdits });
      const [result] = await services.storage.writeDocuments(db, [edit], { newEdits, limits: documentLimits(services) });
      return written(request, db, id, throwIfRefused(result!));
    }
    case 'DELETE': {
      requireWriter(request, security, id);
      await requireValidationNotNeeded(request, services, db, security);
      const rev = revisionFrom(request);
      if (rev === undefined) throw conflict();
      if (!isValidRev(rev)) throw badRequest('Invalid rev format');
      const existing = await services.storage.readDocument(db, id);
      if (!existing) throw documentMissing();
      const [result] = await services.storage.writeDocuments(db, [{ id, body: {}, deleted: true, baseRev: rev }], { newEdits: true });
      return written(request, db, id, throwIfConflict(result!), 200);
    }
    default:
      throw methodNotAllowed(['DELETE', 'GET', 'HEAD', 'PUT']);
  }
}

async function readDocument(request: Request, services: Services, db: string, id: string): Promise<Reply> {
  const rev = request.query.get('rev') ?? undefined;
  if (rev !== undefined && !isValidRev(rev)) throw badRequest('Invalid rev format');
  const meta = booleanParam(request.query, 'meta');
  const stored = await services.storage.readDocument(db, id, rev === undefined ? {} : { rev });
  if (!stored) throw documentMissing();
  if (stored.deleted && rev === undefined) throw documentDeleted();
  const etag = `"${stored.rev}"`;
  if (request.header('if-none-match') === etag) return { status: 304, headers: { ETag: etag } };
  const body = renderRevision(stored, {
    revs: booleanParam(request.query, 'revs'),
    conflicts: meta || booleanParam(request.query, 'conflicts'),
    deletedConflicts: meta || booleanParam(request.query, 'deleted_conflicts'),
    localSeq: meta || booleanParam(request.query, 'local_seq'),
  });
  return json(200, body, { ETag: etag });
}

/** `POST /{db}`: a new document, with the client's `_id` or a generated one. */
export async function createDocumentByPost(request: Request, services: Services, db: string): Promise<Reply> {
  if (services.users.isUsersDb(db)) {
    const body = await request.json(maxDocumentSize(services));
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('Document must be a JSON object');
    const security = await securityOf(services.storage, db);
    return writeUserDocument(request, services, db, body as JsonObject, security, isDbAdmin(request.userCtx, security));
  }
  const security = await openAsMember(services.storage, db, request.userCtx);
  const body = await request.json(maxDocumentSize(services));
  const withId = body !== null && typeof body === 'object' && !Array.isArray(body) && !('_id' in body)
    ? Object.fromEntries([['_id', randomHex()], ...Object.entries(body)])
    : body;
  const { edit } = toEdit(withId, { newEdits: true });
  if (edit.id.startsWith('_local/')) {
    const result = await services.storage.putLocal(db, edit.id, edit.body, edit.baseRev);
    return written(request, db, edit.id, throwIfConflict(result));
  }
  requireWriter(request, security, edit.id);
  await requireValidationNotNeeded(request, services, db, security);
  const [result] = await services.storage.writeDocuments(db, [edit], { newEdits: true });
  return written(request, db, edit.id, throwIfConflict(result!));
}

/** `_local/` documents: no history, not replicated, readable and writable by members. */
async function localDocument(request: Request, services: Services, db: string, id: string): Promise<Reply> {
  await openAsMember(services.storage, db, request.userCtx);
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      const local = await services.storage.getLocal(db, id);
      if (!local) throw documentMissing();
      return json(200, Object.fromEntries([['_id', local.id], ['_rev', local.rev], ...Object.entries(local.body)]));
    }
    case 'PUT': {
      const { edit, rev } = toEdit(await request.json(maxDocumentSize(services)), { id, rev: revisionFrom(request), newEdits: true });
      const result = edit.deleted
        ? await services.storage.deleteLocal(db, id, rev)
        : await services.storage.putLocal(db, id, edit.body, rev);
      return written(request, db, id, throwIfConflict(result));
    }
    case 'DELETE': {
      const result = await services.storage.deleteLocal(db, id, revisionFrom(request));
      if (!result.ok && !(await services.storage.getLocal(db, id))) throw documentMissing();
      return written(request, db, id, throwIfConflict(result), 200);
    }
    default:
      throw methodNotAllowed(['DELETE', 'GET', 'HEAD', 'PUT']);
  }
}

/** A users-db batch entry that validation would see: an object with an id, not a `_local` one. */
function isValidatedDoc(doc: unknown): boolean {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return false;
  const id = (doc as JsonObject)['_id'];
  return typeof id === 'string' && !id.startsWith('_local/');
}

/** `POST /{db}/_bulk_docs`: many edits in one request, one result per document. */
export async function bulkDocs(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const security = await openAsMember(services.storage, db, request.userCtx);
  const body = await readBulkJson(request, services);
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !('docs' in body)) {
    throw badRequest('POST body must include `docs` parameter.');
  }
  const { docs, new_edits: newEditsValue } = body as JsonObject;
  if (!Array.isArray(docs)) throw badRequest('`docs` parameter must be an array.');
  if (newEditsValue !== undefined && typeof newEditsValue !== 'boolean') throw badRequest('`new_edits` parameter must be a boolean.');
  const newEdits = newEditsValue ?? true;
  const maxSize = maxDocumentSize(services);
  const canWriteDesign = isServerAdmin(request.userCtx) || isDbAdmin(request.userCtx, security);

  const usersDb = services.users.isUsersDb(db);
  const refusal = await unrunValidationRefusal(services.storage, db, request.userCtx, security, usersDb);
  type Slot = { id: string; error?: { error: string; reason: string }; edit?: DocumentEdit; local?: { body: JsonObject; rev?: string; deleted: boolean } };
  // A users-db batch is validated in order (each may cost a PBKDF2, and a batch must not take every
  // place of the PBKDF2 queue at once), each edit against the batch's last accepted edit of
  // the same id (as if it were stored already): two revisions of one new name in a `new_edits:
  // false` batch must not both pass as creations and leave a conflicted document behind.
  const accepted = new Map<string, JsonObject>();
  const prepareUserDoc = async (doc: unknown): Promise<unknown> => {
    if (refusal && isValidatedDoc(doc)) return { rejected: { error: refusal.error, reason: refusal.reason }, id: (doc as JsonObject)['_id'] as string };
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return doc;
    const id = (doc as JsonObject)['_id'];
    try {
      const result = await services.users.prepare(db, doc as JsonObject, { userCtx: request.userCtx, isAdmin: canWriteDesign }, typeof id === 'string' ? accepted.get(id) : undefined);
      if (typeof id === 'string' && result['_deleted'] !== true) accepted.set(id, result);
      return result;
    } catch (error) {
      if (!isCouchError(error) || typeof id !== 'string') throw error;
      return { rejected: { error: error.error, reason: error.reason }, id };
    }
  };
  const prepared: unknown[] = usersDb ? [] : docs;
  if (usersDb) for (const doc of docs) prepared.push(await prepareUserDoc(doc));
  const toSlot = (doc: unknown): Slot => {
    if (doc !== null && typeof doc === 'object' && 'rejected' in doc && !Array.isArray(doc)) {
      const rejected = doc as { rejected: { error: string; reason: string }; id: string };
      return { id: rejected.id, error: rejected.rejected };
    }
    const candidate = newEdits && doc !== null && typeof doc === 'object' && !Array.isArray(doc) && !('_id' in doc)
      ? Object.fromEntries([['_id', randomHex()], ...Object.entries(doc)])
      : doc;
    const { edit, rev } = toEdit(candidate, { newEdits });
    if (JSON.stringify(edit.body).length > maxSize) {
      return { id: edit.id, error: { error: 'too_large', reason: 'Document too large' } };
    }
    if (edit.id.startsWith('_local/')) return { id: edit.id, local: { body: edit.body, rev, deleted: edit.deleted } };
    if (refusal) return { id: edit.id, error: { error: refusal.error, reason: refusal.reason } };
    if (edit.id.startsWith('_design/') && !canWriteDesign) {
      return { id: edit.id, error: { error: 'unauthorized', reason: 'You are not a db or server admin.' } };
    }
    return { id: edit.id, edit };
  };
  // A batch of 100 000 documents is prepared, and its answer serialised, a slice at a time (as the
  // storage writes it), so other requests keep being answered.
  const turns = new LoopTurns();
  const slots: Slot[] = [];
  for (const doc of prepared) {
    await turns.maybeYield();
    slots.push(toSlot(doc));
  }

  const edits = slots.filter((slot) => slot.edit).map((slot) => slot.edit!);
  const results = edits.length > 0 ? await services.storage.writeDocuments(db, edits, { newEdits, limits: documentLimits(services) }) : [];
  let next = 0;
  const rows: JsonObject[] = [];
  for (const slot of slots) {
    if (slot.error) {
      rows.push({ id: slot.id, ...slot.error });
    } else if (slot.local) {
      const result = slot.local.deleted
        ? await services.storage.deleteLocal(db, slot.id, slot.local.rev)
        : await services.storage.putLocal(db, slot.id, slot.local.body, slot.local.rev);
      rows.push(result.ok ? { ok: true, id: slot.id, rev: result.rev } : { id: slot.id, error: result.error, reason: result.reason });
    } else {
      const result = results[next++]!;
      if (result.ok && newEdits) rows.push({ ok: true, id: result.id, rev: result.rev });
      if (!result.ok) rows.push({ id: result.id, error: result.error, reason: result.reason });
    }
  }
  const serialized: string[] = [];
  for (const row of rows) {
    await turns.maybeYield();
    serialized.push(JSON.stringify(row));
  }
  return { status: 201, body: Buffer.from(`[${serialized.join(',')}]\n`, 'utf8') };
}
