import { isValidDatabaseName } from '../databases/names.js';
import { validateDocumentId } from '../documents/document-json.js';
import type { OpenedDatabase } from '../databases/opened-database.js';
import { localDocumentAttachments } from '../errors/attachment-errors.js';
import { illegalDatabaseName, invalidLocalDocumentId, methodNotAllowed, notFound } from '../errors/catalog.js';
import type { Request } from './request.js';
import type { Services } from './services.js';

/** The database a path names (its first segment), 400 `illegal_database_name` for a name CouchDB refuses. */
export function databaseName(request: Request): string {
  const name = request.segments[0]!;
  if (!isValidDatabaseName(name)) throw illegalDatabaseName(name);
  return name;
}

/** The document id a path names: `/{db}/{id}`, `/{db}/_design/{name}`, `/{db}/_local/{name}`. */
export function documentIdOf(request: Request): string {
  const [, first, second, ...rest] = request.segments as string[];
  if (rest.length > 0) throw first === '_local' ? localDocumentAttachments() : notFound('missing');
  if (first === '_local/' || (first === '_local' && !second)) throw invalidLocalDocumentId();
  if (first === '_design' || first === '_local') {
    if (second === undefined || second === '') throw notFound('missing');
    // The same rules as any other id (no NUL, which PostgreSQL cannot even compare with).
    return validateDocumentId(`${first}/${second}`);
  }
  if (second !== undefined) throw notFound('missing');
  return validateDocumentId(first);
}

/**
 * `/{db}/{doc}/{name…}` and `/{db}/_design/{ddoc}/{name…}`: the document id and the attachment
 * name (its segments joined by `/`); undefined for a document path. `_local` documents have none.
 */
export function attachmentPathOf(segments: readonly string[]): { id: string; name: string } | undefined {
  const [, first, second] = segments;
  if (first === '_local' || first === undefined) return undefined;
  const idLength = first === '_design' ? 2 : 1;
  if (segments.length <= idLength + 1) return undefined;
  const name = segments.slice(idLength + 1).join('/');
  return { id: idLength === 2 ? `${first}/${second}` : first, name };
}

/**
 * Opens the database of a listing (`_all_docs`, `_changes`; GET, HEAD or POST) for the caller;
 * `scoped`: a non-admin of a database with per-document access lists their documents.
 */
export async function openListing(request: Request, services: Services, scoped = false): Promise<OpenedDatabase> {
  const db = databaseName(request);
  if (request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'POST') {
    throw methodNotAllowed(['GET', 'HEAD', 'POST']);
  }
  return services.databases.openListing(db, request.userCtx, scoped);
}
