import { bulkWrite } from '../../databases/bulk-write.js';
import { deleteDocument, throwIfRefused, withGeneratedId, writeDocument } from '../../databases/document-writes.js';
import { maxDocumentSize } from '../../databases/settings.js';
import { isObject, toEdit } from '../../documents/document-json.js';
import { badRequest, documentMissing, documentTooLarge, methodNotAllowed } from '../../errors/catalog.js';
import type { JsonObject } from '../../json/json.js';
import { CouchError } from '../../errors/couch-error.js';
import type { OpenedDatabase } from '../../databases/opened-database.js';
import type { JsonText } from '../../json/json-text.js';
import type { FollowsSource } from '../../attachments/incoming.js';
import { readBulkJson } from '../bulk-body.js';
import { boundaryOf, MultipartReader } from '../../multipart/reader.js';
import { acceptsRelated, relatedReply } from '../multipart-reply.js';
import { parseJsonBytes } from '../request.js';
import { databaseName, documentIdOf } from '../document-path.js';
import { LoopTurns } from '../../turns/loop-turns.js';
import { attachmentsParam, booleanParam, revisionFrom } from '../query.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';
import { absoluteUrl, documentPath } from '../urls.js';
import { matchesIfNoneMatch } from '../static.js';
import { formUpload } from '../form-upload.js';
import { acceptedRows, allOrNothingRows, isBatchWrite, writeStatus } from '../write-answers.js';

function written(request: Request, db: string, id: string, rev: string, status: number = writeStatus(request)): Reply {
  // A batch write is answered as CouchDB answers it before the write: 202, the id, no revision.
  if (isBatchWrite(request) && request.method !== 'DELETE') return json(202, { ok: true, id });
  return json(status, { ok: true, id, rev }, { ETag: `"${rev}"`, Location: absoluteUrl(request, documentPath(db, id)) });
}

const notModified = (etag: string): Reply => ({ status: 304, headers: { ETag: etag } });

function currentRevisionReply(request: Request, rev: string, text: JsonText): Reply {
  const etag = `"${rev}"`;
  if (matchesIfNoneMatch(request.header('if-none-match'), etag)) return notModified(etag);
  return { status: 200, body: text, headers: { ETag: etag } };
}

/** `/{db}/{docid}` and `/{db}/_design/{name}`: read, write, delete one document. */
export async function document(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  const id = documentIdOf(request);
  if (id.startsWith('_local/')) return localDocument(request, services, db, id);
  const opened = await services.databases.openForDocument(db, request.userCtx, id);
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      if (request.query.size === 0) {
        // The common read, no parameters: the document's text, kept while its revision is current.
        const { rev, text } = await opened.readCurrentText(id);
        return currentRevisionReply(request, rev, text);
      }
      // `meta=true` is revs_info, conflicts and deleted_conflicts, as CouchDB's parse_doc_query.
      const meta = booleanParam(request.query, 'meta');
      const wanted = attachmentsParam(request.query);
      const related = wanted !== undefined && acceptsRelated(request.header('accept'));
      const { rev, doc, parts } = await opened.readDocument(
        id,
        request.query.get('rev') ?? undefined,
        {
          revs: booleanParam(request.query, 'revs'),
          revsInfo: meta || booleanParam(request.query, 'revs_info'),
          conflicts: meta || booleanParam(request.query, 'conflicts'),
          deletedConflicts: meta || booleanParam(request.query, 'deleted_conflicts'),
          localSeq: booleanParam(request.query, 'local_seq'),
          attEncodingInfo: booleanParam(request.query, 'att_encoding_info'),
        },
        { latest: booleanParam(request.query, 'latest'), attachments: wanted && { ...wanted, follows: related } },
      );
      const etag = `"${rev}"`;
      if (matchesIfNoneMatch(request.header('if-none-match'), etag)) return notModified(etag);
      if (parts !== undefined && parts.length > 0) return relatedReply(doc, parts, (part) => opened.attachmentData(part.digest), { ETag: etag });
      return json(200, doc, { ETag: etag });
    }
    case 'PUT': {
      const newEdits = booleanParam(request.query, 'new_edits', true);
      const related = await relatedParts(request, maxDocumentSize(services.config));
      const body = related ? related.doc : await request.json(maxDocumentSize(services.config));
      const result = await writeDocument(opened, body, { id, rev: revisionFrom(request), newEdits, ...(related ? { follows: related.follows } : {}) });
      return written(request, db, id, result.rev);
    }
    case 'DELETE': {
      // CouchDB opens the document first (404 `missing` or `deleted`); where a hook decides access
      // per document (the users database) that answer must not come before the access answer.
      if (!opened.hooks.some((hooks) => hooks.access)) await opened.readCurrentText(id);
      const result = await deleteDocument(opened, id, revisionFrom(request)).catch((error: unknown) => missingInsteadOfConflict(opened, id, error));
      return written(request, db, id, result.rev, writeStatus(request) === 202 ? 202 : 200);
    }
    case 'POST':
      return formUpload(request, services, opened, id);
    default:
      throw methodNotAllowed(['DELETE', 'GET', 'HEAD', 'POST', 'PUT']);
  }
}

/**
 * CouchDB answers the DELETE of a missing document 404, never 409. In the users database this is
 * asked only once the write was refused as a conflict, so every access answer (403 for another's
 * document, whether or not it exists) stays what it was.
 */
async function missingInsteadOfConflict(opened: OpenedDatabase, id: string, error: unknown): Promise<never> {
  if (!(error instanceof CouchError) || error.status !== 409) throw error;
  const absence = await opened.readCurrentText(id).then(
    () => undefined,
    (readError: unknown) => (readError instanceof CouchError && readError.status === 404 ? readError : undefined),
  );
  throw absence ?? error;
}

/**
 * A `multipart/related` PUT (CouchDB's replicator): the document as the first part, then one part
 * per `follows: true` attachment, in the order they are named, each streamed into storage.
 */
async function relatedParts(request: Request, maxBytes: number): Promise<{ doc: unknown; follows: FollowsSource } | undefined> {
  const type = request.header('content-type') ?? '';
  if (request.contentType().toLowerCase() !== 'multipart/related') return undefined;
  const boundary = boundaryOf(type);
  if (boundary === undefined) throw badRequest('multipart/related needs a boundary.');
  const reader = new MultipartReader(request.stream(), boundary);
  const first = await reader.nextPart();
  if (first === undefined) throw badRequest('multipart/related without a document part.');
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of first.body) {
    size += chunk.length;
    if (size > maxBytes) throw documentTooLarge();
    parts.push(chunk);
  }
  const doc = parseJsonBytes(Buffer.concat(parts));
  const follows: FollowsSource = async () => (await reader.nextPart())?.body;
  return { doc, follows };
}

/** `POST /{db}`: a new document, with the client's `_id` or a generated one. */
export async function postDocument(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  const opened = await services.databases.openForDocument(db, request.userCtx);
  const body = withGeneratedId(await request.json(maxDocumentSize(services.config)));
  const result = await writeDocument(opened, body, { newEdits: true });
  return written(request, db, result.id, result.rev);
}

/** `_local/` documents: no history, not replicated, readable and writable by members. */
async function localDocument(request: Request, services: Services, db: string, id: string): Promise<Reply> {
  const opened = await services.databases.openScoped(db, request.userCtx);
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      const local = await opened.getLocal(id);
      if (!local) throw documentMissing();
      return json(200, Object.fromEntries([['_id', local.id], ['_rev', local.rev], ...Object.entries(local.body)]));
    }
    case 'PUT': {
      const body = await request.json(maxDocumentSize(services.config));
      // CouchDB ignores a `_local` document's own `_id`: the path names it.
      const { edit, rev } = toEdit(isObject(body) ? { ...body, _id: id } : body, { id, rev: revisionFrom(request), newEdits: true });
      return written(request, db, id, throwIfRefused(await opened.writeLocal(id, edit.body, rev, edit.deleted)));
    }
    case 'DELETE': {
      const result = await opened.writeLocal(id, {}, revisionFrom(request), true);
      if (!result.ok && !(await opened.getLocal(id))) throw documentMissing();
      return written(request, db, id, throwIfRefused(result), 200);
    }
    default:
      throw methodNotAllowed(['DELETE', 'GET', 'HEAD', 'PUT']);
  }
}

/** The `docs` and `new_edits` of a `_bulk_docs` body. */
function bulkRequest(body: unknown): { docs: unknown[]; newEdits: boolean; allOrNothing: boolean; w: unknown } {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !('docs' in body)) {
    throw badRequest('POST body must include `docs` parameter.');
  }
  const { docs, new_edits: newEdits, all_or_nothing: allOrNothing, w } = body as JsonObject;
  if (!Array.isArray(docs)) throw badRequest('`docs` parameter must be an array.');
  if (newEdits !== undefined && typeof newEdits !== 'boolean') throw badRequest('`new_edits` parameter must be a boolean.');
  return { docs, newEdits: newEdits ?? true, allOrNothing: allOrNothing === true, w };
}

/** `POST /{db}/_bulk_docs`: many edits in one request, one result per document. */
export async function bulkDocs(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const opened = await services.databases.openScoped(db, request.userCtx);
  const { docs, newEdits, allOrNothing, w } = bulkRequest(await readBulkJson(request, services.config));
  if (allOrNothing && newEdits) return json(417, allOrNothingRows(docs));
  const status = writeStatus(request, w);
  const written = await bulkWrite(opened, docs, newEdits, request.signal);
  const rows = status === 202 ? acceptedRows(written) : written;
  // The answer of a batch of 100 000 documents is serialised a slice at a time too.
  const turns = LoopTurns.until(request.signal);
  const serialized: string[] = [];
  for (const row of rows) {
    await turns.maybeYield();
    serialized.push(JSON.stringify(row));
  }
  return { status, body: Buffer.from(`[${serialized.join(',')}]\n`, 'utf8') };
}
