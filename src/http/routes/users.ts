import { isDbAdmin, isDbMember, requireDbMember } from '../../identity/authorization.js';
import { renderRevision, toEdit, isValidRev, validateDocumentId } from '../../documents/document-json.js';
import { badRequest, conflict, documentDeleted, documentMissing, methodNotAllowed, usersDesignDocsForAdmins } from '../../errors/catalog.js';
import type { JsonObject, SecurityObject } from '../../storage/storage.js';
import { userNameFromId } from '../../users/user-documents.js';
import { booleanParam } from '../query.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';
import { absoluteUrl, documentPath } from '../urls.js';
import { unrunValidationRefusal } from '../../databases/unrun-validation.js';
import { securityOf } from './database-access.js';
import { maxDocumentSize } from './databases.js';

/**
 * Documents of the users database. Its per-document rules replace the membership check for a
 * user's own document (DESIGN §1): the owner may read it and change its password; everyone else
 * sees at most the public fields, and writes go through CouchDB's hashing and validation.
 */
export async function userDocument(request: Request, services: Services, db: string, id: string): Promise<Reply> {
  const security = await securityOf(services.storage, db);
  const isAdmin = isDbAdmin(request.userCtx, security);
  if (id.startsWith('_design/') && !isAdmin) throw usersDesignDocsForAdmins();
  switch (request.method) {
    case 'GET':
    case 'HEAD':
      return readUserDocument(request, services, db, id, security, isAdmin);
    case 'PUT': {
      const body = await request.json(maxDocumentSize(services));
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('Document must be a JSON object');
      const rev = request.query.get('rev') ?? undefined;
      const withId = Object.fromEntries([...Object.entries(body), ['_id', id], ...(rev !== undefined && !('_rev' in body) ? [['_rev', rev]] : [])]);
      return writeUserDocument(request, services, db, withId as JsonObject, security, isAdmin);
    }
    case 'DELETE': {
      const rev = request.query.get('rev');
      if (rev === null) throw conflict();
      if (!isValidRev(rev)) throw badRequest('Invalid rev format');
      return writeUserDocument(request, services, db, { _id: id, _rev: rev, _deleted: true }, security, isAdmin, 200);
    }
    default:
      throw methodNotAllowed(['DELETE', 'GET', 'HEAD', 'PUT']);
  }
}

async function readUserDocument(request: Request, services: Services, db: string, id: string, security: SecurityObject, isAdmin: boolean): Promise<Reply> {
  const owner = request.userCtx.name !== null && userNameFromId(id) === request.userCtx.name;
  const mayReadOthers = isAdmin || isDbMember(request.userCtx, security) || services.config.authBoolean('users_db_public', false);
  if (!isAdmin && !owner && !mayReadOthers) throw documentMissing();
  const rev = request.query.get('rev') ?? undefined;
  if (rev !== undefined && !isValidRev(rev)) throw badRequest('Invalid rev format');
  const stored = await services.storage.readDocument(db, id, rev === undefined ? {} : { rev });
  if (!stored) throw documentMissing();
  if (stored.deleted && rev === undefined) throw documentDeleted();
  const full = renderRevision(stored, {
    revs: booleanParam(request.query, 'revs'),
    conflicts: booleanParam(request.query, 'conflicts'),
  });
  const visible = services.users.readerFor(db, request.userCtx, security).single(full);
  if (!visible) throw documentMissing();
  return json(200, visible, { ETag: `"${stored.rev}"` });
}

/**
 * Creation needs membership of the users db (signup is closed by default); updates follow the owner
 * rules. The owner rule only updates: a name known from a JWT or a proxy alone must not be able to
 * give itself a lasting password by creating its document.
 */
export async function writeUserDocument(
  request: Request,
  services: Services,
  db: string,
  doc: JsonObject,
  security: SecurityObject,
  isAdmin: boolean,
  status = 201,
): Promise<Reply> {
  // The id rules of every other path first (no NUL, no unpaired surrogate): storage cannot look such an id up.
  const id = typeof doc['_id'] === 'string' ? validateDocumentId(doc['_id']) : String(doc['_id']);
  const stored = await services.storage.readDocument(db, id);
  // Only an update of the owner's own live document skips the membership check (DESIGN §1); for
  // everyone else the answer does not depend on whether the name exists.
  const updatesOwnDocument = request.userCtx.name !== null && userNameFromId(id) === request.userCtx.name && stored !== undefined && !stored.deleted;
  if (!isAdmin && !updatesOwnDocument) requireDbMember(request.userCtx, security);
  const refusal = id.startsWith('_design/') ? undefined : await unrunValidationRefusal(services.storage, db, request.userCtx, security, true);
  if (refusal) throw refusal;
  // As CouchDB, a write to a live document that does not name one of its leaves is a conflict
  // before any validation (so validation messages never hint at the document's content).
  if (stored && !stored.deleted) {
    const leaves = [stored.rev, ...stored.conflicts];
    if (typeof doc['_rev'] !== 'string' || !leaves.includes(doc['_rev'])) throw conflict();
  }
  const prepared = await services.users.prepare(db, doc, { userCtx: request.userCtx, isAdmin });
  const { edit } = toEdit(prepared, { newEdits: true });
  const [result] = await services.storage.writeDocuments(db, [edit], { newEdits: true });
  if (!result!.ok) throw conflict();
  return json(status, { ok: true, id, rev: result!.rev }, { ETag: `"${result!.rev}"`, Location: absoluteUrl(request, documentPath(db, id)) });
}
