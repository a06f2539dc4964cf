/**
 * The endpoints replicators use besides `_changes` and `_bulk_docs`: `POST /{db}/_revs_diff`,
 * `POST /{db}/_missing_revs`, `POST /{db}/_bulk_get`, `POST /{db}/_ensure_full_commit`, and
 * `GET /{db}/{id}?open_revs=…`. Every one opens the database as document reads do; `_users`
 * documents are shown only as the users-database read rule allows (the database layer's hooks).
 */
import { revisionDiffs, revisionOf } from '../../databases/revisions.js';
import type { OpenedDatabase } from '../../databases/opened-database.js';
import type { OpenedRevision } from '../../databases/types.js';
import { isObject, validateDocumentId } from '../../documents/document-json.js';
import { isCouchError } from '../../errors/couch-error.js';
import { badRequest, documentMissing, invalidJson, invalidRevFormat, methodNotAllowed, requestBodyNotObject } from '../../errors/catalog.js';
import type { Json, JsonObject } from '../../json/json.js';
import { tooManyBulkGetDocs } from '../../errors/query-errors.js';
import { readBulkJson } from '../bulk-body.js';
import { LoopTurns } from '../../turns/loop-turns.js';
import { streamedRows } from '../streamed-json.js';
import { databaseName, documentIdOf } from '../document-path.js';
import { attachmentsParam, booleanParam } from '../query.js';
import { mixedReply, type MixedItem } from '../multipart-reply.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

function parseRevList(value: Json | undefined): string[] {
  if (!Array.isArray(value)) throw invalidRevFormat();
  return value.map((rev) => {
    const asked = revisionOf(rev);
    if (asked === undefined) throw invalidRevFormat();
    return asked;
  });
}

async function readIdRevs(request: Request, services: Services): Promise<[string, string[]][]> {
  const body = await readBulkJson(request, services.config);
  if (!isObject(body)) throw requestBodyNotObject();
  return Object.entries(body).map(([id, revs]) => [id, parseRevList(revs)]);
}

async function openForDiff(request: Request, services: Services): Promise<OpenedDatabase> {
  const db = databaseName(request);
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  return services.databases.openScoped(db, request.userCtx);
}

/** `POST /{db}/_revs_diff`: `{id: [revs]}` → the revisions this database lacks. */
export async function revsDiff(request: Request, services: Services): Promise<Reply> {
  const opened = await openForDiff(request, services);
  const asked = await readIdRevs(request, services);
  const diffs = await revisionDiffs(opened, asked, request.signal);
  const entries: [string, Json][] = [];
  asked.forEach(([id], i) => {
    const diff = diffs[i]!;
    if (diff.missing.length === 0) return;
    const value: JsonObject = { missing: diff.missing };
    if (diff.possibleAncestors.length > 0) value['possible_ancestors'] = diff.possibleAncestors;
    entries.push([id, value]);
  });
  return json(200, Object.fromEntries(entries));
}

/** `POST /{db}/_missing_revs`: the older form of `_revs_diff`. */
export async function missingRevs(request: Request, services: Services): Promise<Reply> {
  const opened = await openForDiff(request, services);
  const asked = await readIdRevs(request, services);
  const diffs = await revisionDiffs(opened, asked, request.signal);
  const entries = asked.flatMap(([id], i): [string, Json][] => (diffs[i]!.missing.length > 0 ? [[id, diffs[i]!.missing]] : []));
  return json(200, { missing_revs: Object.fromEntries(entries) });
}

/** `POST /{db}/_ensure_full_commit`: every write is durable when acknowledged, so only the answer remains. */
export async function ensureFullCommit(request: Request, services: Services): Promise<Reply> {
  const opened = await openForDiff(request, services);
  await request.discardBody();
  const info = await opened.info();
  return json(201, { ok: true, instance_start_time: info?.instanceStartTime ?? '0' });
}

/**
 * How `open_revs` and `_bulk_get` render a revision: `_revisions` when asked and attachments as
 * asked, never `_conflicts` (or `meta`'s members): CouchDB opens revisions without the document's
 * metadata, and a branch listed among its own conflicts would mislead.
 */
function renderFlags(query: URLSearchParams): { revs: boolean; attachments: { since?: string[] } | undefined } {
  return { attachments: attachmentsParam(query), revs: booleanParam(query, 'revs') };
}

const NOT_ACCEPTABLE_IN_BULK_GET = ['open_revs', 'new_edits', 'w', 'rev', 'atts_since'];

type BulkGetItem = { id: Json; error: JsonObject } | { id: string; revs: 'all' | string[]; rev: string; attsSince?: string[] };
const errorOf = (id: Json, rev: Json, error: string, reason: string): JsonObject => ({ error: { id, rev, error, reason } });

function bulkGetItem(spec: Json): BulkGetItem {
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
  // A document's own `atts_since` (CouchDB's replicator sends the target's possible ancestors).
  const since = spec['atts_since'];
  const attsSince = Array.isArray(since) ? { attsSince: since.filter((item): item is string => typeof item === 'string') } : {};
  if (rev === undefined || rev === null) return { id: id as string, revs: 'all', rev: 'undefined', ...attsSince };
  const asked = revisionOf(rev);
  if (asked === undefined) return { id: id as string, error: errorOf(id, rev, 'bad_request', invalidRevFormat().reason) };
  return { id: id as string, revs: [asked], rev: asked, ...attsSince };
}

type Flags = ReturnType<typeof renderFlags>;

async function bulkGetResult(opened: OpenedDatabase, item: BulkGetItem, found: OpenedRevision[], flags: Flags): Promise<JsonObject> {
  if (!('revs' in item)) return { id: item.id, docs: [item.error] };
  if (found.length === 0) return { id: item.id, docs: [errorOf(item.id, item.rev, 'not_found', 'missing')] };
  const docs: JsonObject[] = [];
  for (const result of found) {
    if ('missing' in result) {
      docs.push(errorOf(item.id, result.missing, 'not_found', 'missing'));
      continue;
    }
    try {
      const wanted = flags.attachments && item.attsSince ? { since: item.attsSince } : flags.attachments;
      docs.push({ ok: await opened.shownWithAttachments(result.ok, flags, wanted) });
    } catch (error) {
      if (!isCouchError(error)) throw error;
      docs.push(errorOf(item.id, result.ok.rev, error.error, error.reason));
    }
  }
  return { id: item.id, docs };
}

/** Revisions opened per storage call: the event loop gets a turn between two. */
const BULK_GET_BATCH = 500;

/** The results of `_bulk_get`, in order, a batch of `BULK_GET_BATCH` documents at a time. */
async function* bulkGetResults(opened: OpenedDatabase, items: readonly BulkGetItem[], flags: Flags, latest: boolean, signal: AbortSignal): AsyncIterable<JsonObject[]> {
  const turns = LoopTurns.until(signal);
  for (let start = 0; start < items.length; start += BULK_GET_BATCH) {
    await turns.maybeYield();
    const batch = items.slice(start, start + BULK_GET_BATCH);
    const queries = batch.flatMap((item) => ('revs' in item ? [{ id: item.id, revs: item.revs, latest }] : []));
    const found = await opened.openRevisions(queries);
    const results: JsonObject[] = [];
    let next = 0;
    for (const item of batch) {
      await turns.maybeYield();
      results.push(await bulkGetResult(opened, item, 'revs' in item ? (found[next++] ?? []) : [], flags));
    }
    yield results;
  }
}

/**
 * `POST /{db}/_bulk_get?revs=…&latest=…`: many `open_revs` in one request (JSON answer, streamed),
 * at most `[couchdb] max_bulk_get_count` documents (413 past it, as CouchDB).
 */
export async function bulkGet(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const opened = await services.databases.openForRevisionReads(db, request.userCtx);
  for (const name of NOT_ACCEPTABLE_IN_BULK_GET) {
    if (request.query.has(name)) throw badRequest(`"${name}" query parameter is not acceptable`);
  }
  const flags = renderFlags(request.query);
  const latest = booleanParam(request.query, 'latest');
  const body = await readBulkJson(request, services.config);
  if (!isObject(body) || !Array.isArray(body['docs'])) throw badRequest("Missing JSON list of 'docs'.");
  const max = services.config.getInteger('couchdb', 'max_bulk_get_count');
  if (body['docs'].length > max) throw tooManyBulkGetDocs(max);
  const items = body['docs'].map(bulkGetItem);
  return streamedRows(200, '{"results":[', ']}', (signal) => bulkGetResults(opened, items, flags, latest, signal));
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

function askedRevisions(openRevs: string): 'all' | string[] {
  if (openRevs === 'all') return 'all';
  let value: Json;
  try {
    value = JSON.parse(openRevs) as Json;
  } catch {
    throw invalidJson();
  }
  return parseRevList(value);
}

/** `GET /{db}/{id}?open_revs=all|[…]` (with `revs`, `latest`, `conflicts`). */
export async function openRevs(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  const id = documentIdOf(request);
  const opened = await services.databases.openForRevisionReads(db, request.userCtx, id);
  const revs = askedRevisions(request.query.get('open_revs')!);
  const flags = renderFlags(request.query);
  const [results = []] = await opened.openRevisions([{ id, revs, latest: booleanParam(request.query, 'latest') }]);
  if (revs === 'all' && results.length === 0) throw documentMissing();
  const multipart = wantsMultipart(request.header('accept'));
  const items: MixedItem[] = [];
  for (const result of results) {
    if ('missing' in result) {
      items.push({ json: { missing: result.missing }, error: true });
      continue;
    }
    try {
      // A multipart answer always carries the attachments (those after `atts_since`) as parts, as
      // CouchDB's send_docs_multipart: CouchDB's replicator asks without `attachments=true`.
      if (multipart) {
        const { doc, parts } = opened.shownWithFollows(result.ok, flags, flags.attachments?.since);
        items.push(parts.length > 0 ? { doc, parts } : { json: doc });
      } else items.push({ json: await opened.shownWithAttachments(result.ok, flags, flags.attachments) });
    } catch (error) {
      if (!isCouchError(error) || error.status !== 404) throw error;
      items.push({ json: { missing: result.ok.rev }, error: true });
    }
  }
  if (multipart) return mixedReply(items, (part) => opened.attachmentData(part.digest));
  return json(200, items.map((item) => ('json' in item ? (item.error ? item.json : { ok: item.json }) : { ok: item.doc })));
}
