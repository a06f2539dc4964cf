import { copiedAttachments } from '../../databases/attachment-ops.js';
import { writeDocument } from '../../databases/document-writes.js';
import { badRequest } from '../../errors/catalog.js';
import type { JsonObject } from '../../json/json.js';
import { databaseName, documentIdOf } from '../document-path.js';
import { revisionFrom } from '../query.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';
import { absoluteUrl, documentPath } from '../urls.js';

/** CouchDB's `Destination` header: a relative document id, with `?rev=` when it overwrites one. */
function destination(request: Request): { id: string; rev?: string } {
  const header = request.header('destination');
  if (header === undefined) throw badRequest('Destination header is mandatory for COPY.');
  if (/^https?:\/\//.test(header)) throw badRequest('Destination URL must be relative.');
  const query = header.indexOf('?');
  if (query === -1) return { id: decodeDestination(header) };
  const rev = new URLSearchParams(header.slice(query + 1)).get('rev') ?? undefined;
  return { id: decodeDestination(header.slice(0, query)), rev };
}

function decodeDestination(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw badRequest('Destination header is not a valid document id.');
  }
}

/**
 * `COPY /{db}/{docid}` with `Destination: {target}[?rev={rev}]`: the source revision's body
 * written as a new revision of the target (a new document, or the named revision's successor).
 * 201 with the target's id and new revision, as CouchDB.
 */
export async function copyDocument(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  const sourceId = documentIdOf(request);
  const target = destination(request);
  const source = await services.databases.openForDocument(db, request.userCtx, sourceId);
  const { doc } = await source.readDocument(sourceId, revisionFrom(request), { attEncodingInfo: true });
  const copied = copiedAttachments(source, Object.fromEntries(Object.entries(doc).filter(([name]) => name !== '_id' && name !== '_rev')) as JsonObject);
  const opened = await services.databases.openForDocument(db, request.userCtx, target.id);
  const result = await writeDocument(opened, copied.body, { id: target.id, rev: target.rev, newEdits: true, follows: copied.follows });
  return json(201, { ok: true, id: result.id, rev: result.rev }, { ETag: `"${result.rev}"`, Location: absoluteUrl(request, documentPath(db, result.id)) });
}
