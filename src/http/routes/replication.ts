/**
 * The endpoints replicators use besides `_changes` and `_bulk_docs`: `POST /{db}/_revs_diff`,
 * `POST /{db}/_missing_revs`, `POST /{db}/_bulk_get`, `POST /{db}/_ensure_full_commit`, and
 * `GET /{db}/{id}?open_revs=…` (called from documents.ts). Every one opens the database as a member,
 * exactly as document reads do; `_users` documents are shown only as the users-db read rules allow.
 */
import type { IncomingMessage } from 'node:http';
import { isDbAdmin, isDbMember } from '../../identity/authorization.js';
import { randomHex } from '../../crypto/crypto.js';
import { renderRevision, validateDocumentId } from '../../documents/document-json.js';
import { isCouchError } from '../../errors/couch-error.js';
import { badRequest, documentMissing, invalidJson, methodNotAllowed, requestEntityTooLarge } from '../../errors/catalog.js';
import { parseRevision, revisionsDiff } from '../../storage/revision-tree.js';
import type { Json, JsonObject, OpenedRevision, RevisionTree, SecurityObject, StoredRevision } from '../../storage/storage.js';
import { userNameFromId } from '../../users/user-documents.js';
import { booleanParam } from '../query.js';
import { json, type Reply } from '../reply.js';
import { parseJsonBytes, type Request } from '../request.js';
import type { Services } from '../services.js';
import { openAsMember, securityOf } from './database-access.js';
import { databaseName, maxDocumentSize } from './databases.js';

/** Bodies of bulk requests are refused above this many bytes unless `max_document_size` is larger. */
export const BULK_BODY_BYTES = 64 * 1024 * 1024;

/**
 * The largest body of a bulk request (`_bulk_docs`, `_bulk_get`, `_revs_diff`, POST `_changes` and
 * `_all_docs`): 64 MiB, or `[couchdb] max_document_size` when that is larger, never more than
 * `[chttpd] max_http_request_size`. A bigger batch gets 413 while it is read, so a replicator's
 * oversized batch costs at most this much memory.
 */
export function bulkBodyLimit(services: Services): number {
  const maxRequest = services.config.getInteger('chttpd', 'max_http_request_size', 4294967296);
  return Math.min(maxRequest, Math.max(BULK_BODY_BYTES, maxDocumentSize(services)));
}

/** How long the rest of an oversized body is read and dropped so that the client gets its 413. */
const DRAIN_MS = 30_000;

/**
 * Reads a body of at most `limit` bytes without ever destroying the request: past the limit the
 * rest is read and dropped (up to `DRAIN_MS`), so that a client still uploading its batch can read
 * the 413 instead of seeing its connection reset. Resolves `undefined` for a body that was too large.
 */
function readLimited(raw: IncomingMessage, limit: number, drainBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = limit < 0;
    let timer: NodeJS.Timeout | undefined;
    const cleanup = (): void => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('error', onError);
      raw.off('close', onClose);
    };
    const tooLarge = (): void => {
      over = true;
      chunks.length = 0;
      timer ??= setTimeout(() => {
        cleanup();
        resolve(undefined);
      }, DRAIN_MS);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (!over && size > limit) tooLarge();
      if (over) {
        // Past what max_http_request_size allows, stop listening: the connection is then closed.
        if (size > drainBytes) {
          cleanup();
          resolve(undefined);
        }
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(over ? undefined : Buffer.concat(chunks, size));
    };
    const onError = (): void => {
      cleanup();
      reject(badRequest('Incomplete request body.'));
    };
    const onClose = (): void => {
      if (raw.complete) return;
      cleanup();
      reject(badRequest('Incomplete request body.'));
    };
    if (over) tooLarge();
    raw.on('data', onData);
    raw.on('end', onEnd);
    raw.on('error', onError);
    raw.on('close', onClose);
    raw.resume();
  });
}

/** Reads a bulk request's JSON body under `bulkBodyLimit`; an oversized one is a 413 `too_large`. */
export async function readBulkJson(request: Request, services: Services): Promise<unknown> {
  return parseJsonBytes(await readBulkBytes(request, services));
}

/** The raw body of a bulk request, read under `bulkBodyLimit` (see `readLimited`). */
export async function readBulkBytes(request: Request, services: Services): Promise<Buffer> {
  const limit = bulkBodyLimit(services);
  const encoding = (request.header('content-encoding') ?? 'identity').trim().toLowerCase();
  // Compressed bodies take the general reader (it inflates under the same limit).
  if (encoding !== 'identity') return request.body(limit, requestEntityTooLarge);
  const maxRequest = services.config.getInteger('chttpd', 'max_http_request_size', 4294967296);
  const declared = Number(request.header('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxRequest) throw requestEntityTooLarge();
  const tooLongAlready = Number.isFinite(declared) && declared > limit;
  const bytes = await readLimited(request.raw, tooLongAlready ? -1 : limit, maxRequest);
  if (bytes === undefined) throw requestEntityTooLarge();
  return bytes;
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function parseRevList(value: Json | undefined): string[] {
  if (!Array.isArray(value)) throw badRequest('Invalid rev format');
  return value.map((rev) => {
    if (typeof rev !== 'string' || parseRevision(rev) === undefined) throw badRequest('Invalid rev format');
    return rev;
  });
}

/** `POST /{db}/_revs_diff`: `{id: [revs]}` → the revisions this database lacks. */
export async function revsDiff(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  await openAsMember(services.storage, db, request.userCtx);
  const asked = await readIdRevs(request, services);
  const trees = await treesOf(services, db, asked.map(([id]) => id));
  const entries: [string, Json][] = [];
  asked.forEach(([id, revs], i) => {
    const diff = revisionsDiff(trees[i], revs);
    if (diff.missing.length === 0) return;
    const value: JsonObject = { missing: diff.missing };
    if (diff.possibleAncestors.length > 0) value['possible_ancestors'] = diff.possibleAncestors;
    entries.push([id, value]);
  });
  return json(200, Object.fromEntries(entries));
}

/** `POST /{db}/_missing_revs`: the older form of `_revs_diff`. */
export async function missingRevs(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  await openAsMember(services.storage, db, request.userCtx);
  const asked = await readIdRevs(request, services);
  const trees = await treesOf(services, db, asked.map(([id]) => id));
  const entries: [string, Json][] = [];
  asked.forEach(([id, revs], i) => {
    const { missing } = revisionsDiff(trees[i], revs);
    if (missing.length > 0) entries.push([id, missing]);
  });
  return json(200, { missing_revs: Object.fromEntries(entries) });
}

async function readIdRevs(request: Request, services: Services): Promise<[string, string[]][]> {
  const body = await readBulkJson(request, services);
  if (!isObject(body)) throw badRequest('Request body must be a JSON object');
  return Object.entries(body).map(([id, revs]) => [id, parseRevList(revs)]);
}

/** Trees of the asked ids; an id no document can have (NUL) is unknown without asking storage. */
async function treesOf(services: Services, db: string, ids: string[]): Promise<(RevisionTree | undefined)[]> {
  const storable = ids.filter((id) => !id.includes('\u0000'));
  const trees = await services.storage.revisionTrees(db, storable);
  const byId = new Map(storable.map((id, i) => [id, trees[i]]));
  return ids.map((id) => byId.get(id));
}

/** `POST /{db}/_ensure_full_commit`: every write is durable when acknowledged, so only the answer remains. */
export async function ensureFullCommit(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  await openAsMember(services.storage, db, request.userCtx);
  await request.discardBody();
  const info = await services.storage.databaseInfo(db);
  return json(201, { ok: true, instance_start_time: info?.instanceStartTime ?? '0' });
}

/** How documents of a database are shown to this reader: as stored, or through the users-db rules. */
type Reader = (doc: JsonObject) => JsonObject | undefined;

/**
 * Opens a database for a revision read. Ordinary databases need membership. For a users database
 * the reader must be an admin, a member, the owner of `id` (when given) or `users_db_public` must
 * hold, and documents then pass its read rule (password hashes only for admins and owners).
 */
async function openForRevisionReads(request: Request, services: Services, db: string, ownId?: string): Promise<Reader> {
  if (!services.users.isUsersDb(db)) {
    await openAsMember(services.storage, db, request.userCtx);
    return (doc) => doc;
  }
  const security: SecurityObject = await securityOf(services.storage, db);
  const isAdmin = isDbAdmin(request.userCtx, security);
  const owner = ownId !== undefined && request.userCtx.name !== null && userNameFromId(ownId) === request.userCtx.name;
  const mayRead = isAdmin || owner || isDbMember(request.userCtx, security) || services.config.authBoolean('users_db_public', false);
  if (!mayRead) {
    if (ownId !== undefined) throw documentMissing();
    await openAsMember(services.storage, db, request.userCtx);
  }
  return services.users.readerFor(db, request.userCtx, security).single;
}

interface RenderFlags {
  revs: boolean;
  conflicts: boolean;
  deletedConflicts: boolean;
}

function renderFlags(query: URLSearchParams): RenderFlags {
  const meta = booleanParam(query, 'meta');
  return {
    revs: booleanParam(query, 'revs'),
    conflicts: meta || booleanParam(query, 'conflicts'),
    deletedConflicts: meta || booleanParam(query, 'deleted_conflicts'),
  };
}

/** A stored revision as the reader may see it; a CouchError when it may not see it at all. */
function shown(stored: StoredRevision, flags: RenderFlags, reader: Reader): JsonObject {
  const visible = reader(renderRevision(stored, flags));
  if (visible === undefined) throw documentMissing();
  return visible;
}

const NOT_ACCEPTABLE_IN_BULK_GET = ['open_revs', 'new_edits', 'w', 'rev', 'atts_since'];

/** `POST /{db}/_bulk_get?revs=…&latest=…`: many `open_revs` in one request (JSON answer). */
export async function bulkGet(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const reader = await openForRevisionReads(request, services, db);
  for (const name of NOT_ACCEPTABLE_IN_BULK_GET) {
    if (request.query.has(name)) throw badRequest(`"${name}" query parameter is not acceptable`);
  }
  const flags = renderFlags(request.query);
  const latest = booleanParam(request.query, 'latest');
  const body = await readBulkJson(request, services);
  if (!isObject(body) || !Array.isArray(body['docs'])) throw badRequest("Missing JSON list of 'docs'.");

  type Parsed = { id: Json; error: JsonObject } | { id: string; revs: 'all' | string[]; rev: string };
  const errorOf = (id: Json, rev: Json, error: string, reason: string): JsonObject => ({ error: { id, rev, error, reason } });
  const parsed: Parsed[] = body['docs'].map((spec): Parsed => {
    if (!isObject(spec)) return { id: null, error: errorOf(null, null, 'bad_request', 'document must be a JSON object') };
    const id = spec['id'];
    if (id === undefined) return { id: null, error: errorOf(null, null, 'bad_request', 'document id missed') };
    try {
      validateDocumentId(id);
    } catch (error) {
      if (!isCouchError(error)) throw error;
      return { id, error: errorOf(id, null, error.error, error.reason) };
    }
    const rev = spec['rev'];
    if (rev === undefined || rev === null) return { id: id as string, revs: 'all', rev: 'undefined' };
    if (typeof rev !== 'string' || parseRevision(rev) === undefined) {
      return { id: id as string, error: errorOf(id, rev, 'bad_request', 'Invalid rev format') };
    }
    return { id: id as string, revs: [rev], rev };
  });
  const queries = parsed.flatMap((item) => ('revs' in item ? [{ id: item.id, revs: item.revs, latest }] : []));
  const opened = queries.length === 0 ? [] : await services.storage.openRevisions(db, queries);
  let next = 0;
  const results = parsed.map((item): JsonObject => {
    if (!('revs' in item)) return { id: item.id, docs: [item.error] };
    const found: OpenedRevision[] = opened[next++] ?? [];
    if (found.length === 0) return { id: item.id, docs: [errorOf(item.id, item.rev, 'not_found', 'missing')] };
    const docs = found.map((result): JsonObject => {
      if ('missing' in result) return errorOf(item.id, result.missing, 'not_found', 'missing');
      try {
        return { ok: shown(result.ok, flags, reader) };
      } catch (error) {
        if (!isCouchError(error)) throw error;
        return errorOf(item.id, result.ok.rev, error.error, error.reason);
      }
    });
    return { id: item.id, docs };
  });
  return json(200, { results });
}

/** True when the client asked for `multipart/mixed` and does not take JSON (CouchDB's replicator). */
function wantsMultipart(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const types = accept.split(',').map((part) => {
    const [type, ...params] = part.split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return { type: type!.trim().toLowerCase(), q: q === undefined ? 1 : Number(q.slice(2)) };
  });
  const accepts = (name: string): boolean => types.some((t) => t.type === name && t.q > 0);
  return (accepts('multipart/mixed') || accepts('multipart/*')) && !accepts('application/json');
}

/** `GET /{db}/{id}?open_revs=all|[…]` (with `revs`, `latest`, `conflicts`). */
export async function openRevsReply(request: Request, services: Services, db: string, id: string, openRevs: string): Promise<Reply> {
  const reader = await openForRevisionReads(request, services, db, id);
  let revs: 'all' | string[];
  if (openRevs === 'all') {
    revs = 'all';
  } else {
    let value: Json;
    try {
      value = JSON.parse(openRevs) as Json;
    } catch {
      throw invalidJson();
    }
    revs = parseRevList(value);
  }
  const flags = renderFlags(request.query);
  const [results = []] = await services.storage.openRevisions(db, [{ id, revs, latest: booleanParam(request.query, 'latest') }]);
  if (revs === 'all' && results.length === 0) throw documentMissing();
  const items = results.map((result): JsonObject => {
    if ('missing' in result) return { missing: result.missing };
    try {
      return { ok: shown(result.ok, flags, reader) };
    } catch (error) {
      if (!isCouchError(error) || error.status !== 404) throw error;
      return { missing: result.ok.rev };
    }
  });
  if (!wantsMultipart(request.header('accept'))) return json(200, items);
  // CouchDB's layout for documents without attachments: one JSON part per revision.
  const boundary = randomHex(16);
  let body = `--${boundary}`;
  for (const item of items) {
    body += 'ok' in item
      ? `\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(item['ok'])}\r\n--${boundary}`
      : `\r\nContent-Type: application/json; error="true"\r\n\r\n${JSON.stringify(item)}\r\n--${boundary}`;
  }
  body += '--';
  return { status: 200, body: Buffer.from(body, 'utf8'), headers: { 'Content-Type': `multipart/mixed; boundary="${boundary}"` } };
}
