import { sequencesOf } from '../../databases/sequences.js';
import type { DocumentSummary, RangeOptions, ReadFilter } from '../../databases/types.js';
import type { OpenedDatabase } from '../../databases/opened-database.js';
import { badRequest, methodNotAllowed, requestBodyNotObject } from '../../errors/catalog.js';
import { queryParseError } from '../../errors/query-errors.js';
import type { Json, JsonObject } from '../../json/json.js';
import type { Config } from '../../config/config.js';
import { isObject } from '../../documents/document-json.js';
import { readBulkJson } from '../bulk-body.js';
import { LoopTurns } from '../../turns/loop-turns.js';
import { openListing } from '../document-path.js';
import { compareIdToKey, selectRange } from '../key-range.js';
import { allDocsPartition, withinPartition } from '../partition-query.js';
import { booleanParam, checkKeyCount, jsonParam, nonNegativeIntegerParam } from '../query.js';
import { json, type Reply } from '../reply.js';
import { listingReply, rangePages, wholeListing, type StreamedListing } from '../listing-pages.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

function row(summary: DocumentSummary, includeDocs: boolean, reader: ReadFilter, conflicts: string[] | undefined): JsonObject {
  const value: JsonObject = summary.deleted ? { rev: summary.rev, deleted: true } : { rev: summary.rev };
  const result: JsonObject = { id: summary.id, key: summary.id, value };
  if (includeDocs) {
    const entries: [string, Json][] = [['_id', summary.id], ['_rev', summary.rev], ...Object.entries(summary.body ?? {})];
    if (conflicts !== undefined) entries.push(['_conflicts', conflicts]);
    result['doc'] = summary.deleted || !summary.body ? null : reader.listed(Object.fromEntries(entries) as JsonObject);
  }
  return result;
}

/** Renders listed documents as rows (an absent one stays absent), with `_conflicts` when asked. */
function documentShape(opened: OpenedDatabase, includeDocs: boolean, conflicts: boolean, withAttachments = false, encodingInfo = false) {
  return async (summaries: readonly (DocumentSummary | undefined)[]): Promise<(JsonObject | undefined)[]> => {
    const shownIds = summaries.flatMap((summary) => (summary?.body && !summary.deleted ? [summary.id] : []));
    const conflictsById = conflicts && shownIds.length > 0 ? await opened.conflicts(shownIds) : new Map<string, string[]>();
    return summaries.map((summary) => summary && row(summary, includeDocs, opened.listedView(withAttachments, encodingInfo), conflictsById.get(summary.id)));
  };
}

/** CouchDB's rule: `keys` goes with no bound at all, or with `key` equal to its only key. */
function compatibleWithKeys(keys: Json[], startKey: Json | undefined, endKey: Json | undefined): boolean {
  if (startKey === undefined && endKey === undefined) return true;
  if (keys.length !== 1) return false;
  const only = JSON.stringify(keys[0]);
  return JSON.stringify(startKey) === only && JSON.stringify(endKey) === only;
}

/**
 * Turns JSON keys into the string bounds storage understands, using CouchDB's collation: a key of
 * a type that sorts before strings is no bound at all, one that sorts after strings matches nothing.
 */
function stringBounds(options: { startKey?: Json; endKey?: Json; descending: boolean }): { startKey?: string; endKey?: string; empty: boolean } {
  const bound = (key: Json | undefined, isStart: boolean): { value?: string; empty: boolean } => {
    // No document id holds NUL (validateDocumentId), and PostgreSQL cannot compare with one.
    if (typeof key === 'string' && key.includes('\u0000')) throw badRequest('Keys must not contain NUL characters.');
    if (key === undefined || typeof key === 'string') return { value: key, empty: false };
    const idsAfterKey = compareIdToKey('', key) > 0;
    // Ascending start / descending end below every id: no bound. Otherwise nothing can match.
    const lowerSide = options.descending ? !isStart : isStart;
    return lowerSide === idsAfterKey ? { empty: false } : { empty: true };
  };
  const start = bound(options.startKey, true);
  const end = bound(options.endKey, false);
  return { startKey: start.value, endKey: end.value, empty: start.empty || end.empty };
}

function paging(query: URLSearchParams): { descending: boolean; limit: number | undefined; skip: number } {
  return { descending: booleanParam(query, 'descending'), limit: nonNegativeIntegerParam(query, 'limit'), skip: nonNegativeIntegerParam(query, 'skip') ?? 0 };
}

/** `keys` in the order rows are answered: reversed when descending; at most `[couchdb] max_keys_count`. */
function orderedKeys(keys: Json, descending: boolean, config: Config): Json[] {
  if (!Array.isArray(keys)) throw badRequest('`keys` member must be an array.');
  checkKeyCount(keys.length, config);
  return descending ? [...keys].reverse() : keys;
}

/**
 * `keys` and the options of a listing: the query string's, and a POST body's members, applied
 * before the query string's as CouchDB's `parse_body_and_query` does (so `limit` and `skip` in a
 * body page its `keys`).
 */
async function askedListing(request: Request, services: Services): Promise<{ keys: Json | undefined; query: URLSearchParams }> {
  const keys = jsonParam(request.query, 'keys');
  if (keys !== undefined && !Array.isArray(keys)) throw badRequest('`keys` parameter must be an array.');
  if (request.method !== 'POST') return { keys, query: request.query };
  const body = await readBulkJson(request, services.config);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw requestBodyNotObject();
  // `get` reads a name's first value: the query string's, where both give one.
  const query = new URLSearchParams([...request.query, ...asQuery(body as JsonObject)]);
  if (!('keys' in body)) return { keys, query };
  const bodyKeys = (body as JsonObject)['keys'];
  if (!Array.isArray(bodyKeys)) throw badRequest('`keys` body member must be an array.');
  return { keys: bodyKeys, query };
}

/** A JSON object of query options as query-string pairs (`keys` apart). */
function asQuery(entry: JsonObject): [string, string][] {
  return Object.entries(entry)
    .filter(([name]) => name !== 'keys')
    .map(([name, value]): [string, string] => [name, typeof value === 'string' && !KEY_PARAMETERS.has(name) ? value : JSON.stringify(value)]);
}

const DESIGN_FIRST = '_design/';
/** Sorts right after every `_design/…` id (and is no id a document may have). */
const DESIGN_AFTER = '_design0';

/** `_design_docs`: the range, clamped to the ids that start with `_design/`. */
function designRange(options: RangeOptions): RangeOptions {
  const { startKey, endKey, descending } = options;
  if (!descending) {
    const endClamped = endKey === undefined || endKey >= DESIGN_AFTER;
    return { ...options, startKey: startKey === undefined || startKey < DESIGN_FIRST ? DESIGN_FIRST : startKey, ...(endClamped ? { endKey: DESIGN_AFTER, inclusiveEnd: false } : {}) };
  }
  return { ...options, startKey: startKey === undefined || startKey > DESIGN_AFTER ? DESIGN_AFTER : startKey, endKey: endKey === undefined || endKey < DESIGN_FIRST ? DESIGN_FIRST : endKey };
}

/** The design documents of a database: the ids before `_design0` less those before `_design/`, two counted reads. */
async function designDocCount(opened: OpenedDatabase): Promise<number> {
  const before = async (id: string): Promise<number> => (await opened.listDocuments({ startKey: id, inclusiveEnd: true, descending: false, limit: 0, skip: 0, includeDocs: false })).offset;
  return (await before(DESIGN_AFTER)) - (await before(DESIGN_FIRST));
}

/** `GET/POST /{db}/_all_docs` (POST may carry `keys`). */
export async function allDocs(request: Request, services: Services): Promise<Reply> {
  const opened = await openListing(request, services, true);
  const { keys, query } = await askedListing(request, services);
  return listingReply(await listDocuments(opened, query, keys));
}

/** `GET/POST /{db}/_design_docs`: `_all_docs` of the design documents only, with the same options. */
export async function designDocs(request: Request, services: Services): Promise<Reply> {
  const opened = await openListing(request, services, true);
  const { keys, query } = await askedListing(request, services);
  return listingReply(await listDocuments(opened, query, keys, true));
}

/**
 * `POST /{db}/_all_docs/queries`: several `_all_docs` queries in one request, each an object of
 * the query parameters as JSON values; answered in order as `{"results":[…]}`.
 */
export async function allDocsQueries(request: Request, services: Services): Promise<Reply> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const opened = await openListing(request, services, true);
  const body = await readBulkJson(request, services.config);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw requestBodyNotObject();
  const queries = (body as JsonObject)['queries'];
  if (!Array.isArray(queries)) throw badRequest('`queries` member must be an array.');
  checkKeyCount(queries.reduce<number>((sum, entry) => sum + (isObject(entry) && Array.isArray(entry['keys']) ? entry['keys'].length : 0), 0), services.config);
  const results: JsonObject[] = [];
  for (const entry of queries) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw badRequest('Each query must be a JSON object.');
    const query = new URLSearchParams(asQuery(entry as JsonObject));
    // `/{db}/_partition/{p}/_all_docs/queries`: every query reads the partition.
    const partition = request.query.get('partition');
    if (partition !== null) query.set('partition', partition);
    results.push(await wholeListing(await listDocuments(opened, query, (entry as JsonObject)['keys'])));
  }
  return json(200, { results });
}

/** Parameters whose value is JSON (a key); the others keep a string as it is. */
const KEY_PARAMETERS = new Set(['key', 'startkey', 'start_key', 'endkey', 'end_key', 'startkey_docid', 'endkey_docid']);

/** Ids looked up per storage call: the event loop gets a turn between two. */
const KEYS_PER_LOOKUP = 1000;

interface KeyRowOptions {
  designOnly: boolean;
  includeDocs: boolean;
  withAttachments: boolean;
  shown: ReturnType<typeof documentShape>;
  signal: AbortSignal | undefined;
}

/** The rows of `keys`, in order, a batch of `KEYS_PER_LOOKUP` at a time. */
async function* keyRows(opened: OpenedDatabase, keys: readonly Json[], options: KeyRowOptions): AsyncIterable<JsonObject[]> {
  const turns = LoopTurns.until(options.signal);
  for (let start = 0; start < keys.length; start += KEYS_PER_LOOKUP) {
    await turns.maybeYield();
    const batch = keys.slice(start, start + KEYS_PER_LOOKUP);
    // An id with NUL cannot exist (and PostgreSQL cannot look one up): like a non-string, not found.
    const ids = batch.map((item) => (typeof item === 'string' && !item.includes('\u0000') && (!options.designOnly || item.startsWith(DESIGN_FIRST)) ? item : ''));
    const found = await opened.lookupDocuments(ids, options.includeDocs);
    const rows = await options.shown(found.map((summary, index) => (typeof batch[index] === 'string' ? summary : undefined)));
    if (options.withAttachments) await opened.inlineListedDocs(rows);
    yield batch.map((item, index) => rows[index] ?? { key: item, error: 'not_found' });
  }
}

/** One `_all_docs` answer for these parameters (and `keys` when given). */
async function listDocuments(opened: OpenedDatabase, query: URLSearchParams, keys: Json | undefined, designOnly = false): Promise<JsonObject | StreamedListing> {
  // `key` is a range of one key, as CouchDB's: a deleted or missing document gives no row.
  const key = jsonParam(query, 'key');
  const startKey = key !== undefined ? key : jsonParam(query, 'startkey', 'start_key');
  const endKey = key !== undefined ? key : jsonParam(query, 'endkey', 'end_key');
  if (Array.isArray(keys) && keys.length > 0 && !compatibleWithKeys(keys, startKey, endKey)) {
    throw queryParseError('`keys` is incompatible with `key`, `start_key` and `end_key`');
  }
  const includeDocs = booleanParam(query, 'include_docs');
  const withAttachments = includeDocs && booleanParam(query, 'attachments');
  const shown = documentShape(opened, includeDocs, includeDocs && booleanParam(query, 'conflicts'), withAttachments, booleanParam(query, 'att_encoding_info'));
  const { descending, limit, skip } = paging(query);
  const partition = allDocsPartition(opened, query);

  if (keys !== undefined) {
    // Each key is one row: only the keys of the page are looked up.
    const ordered = orderedKeys(keys, descending, opened.context.config).slice(skip, limit === undefined ? undefined : skip + limit);
    const batches = (signal?: AbortSignal) => keyRows(opened, ordered, { designOnly, includeDocs, withAttachments, shown, signal });
    const total = designOnly ? await designDocCount(opened) : ((await opened.info())?.docCount ?? 0);
    return { head: { total_rows: total, offset: null }, batches };
  }

  const bounds = stringBounds({ startKey, endKey, descending });
  const options: RangeOptions = {
    startKey: bounds.startKey,
    endKey: bounds.endKey,
    inclusiveEnd: booleanParam(query, 'inclusive_end', true),
    descending,
    limit: bounds.empty ? 0 : limit,
    skip,
    includeDocs,
  };
  const ranged = partition !== undefined ? withinPartition(options, partition) : designOnly ? designRange(options) : options;
  const { first, rest } = await rangePages(opened, ranged);
  // `_design_docs` counts the design documents, as CouchDB's `get_total_rows` for its namespace.
  const total = designOnly ? await designDocCount(opened) : first.totalRows;
  const head: JsonObject = { total_rows: total, offset: Math.min(total, first.offset) };
  if (booleanParam(query, 'update_seq')) {
    const info = await opened.info();
    head['update_seq'] = sequencesOf(info).format(info?.updateSeq ?? 0);
  }
  const pageRows = async (summaries: readonly DocumentSummary[]): Promise<JsonObject[]> => {
    const rows = (await shown(summaries)).filter((entry): entry is JsonObject => entry !== undefined);
    if (withAttachments) await opened.inlineListedDocs(rows);
    return rows;
  };
  const firstRows = await pageRows(first.rows);
  if (rest === undefined) return { ...head, rows: firstRows };
  const batches = async function* (signal?: AbortSignal): AsyncIterable<JsonObject[]> {
    yield firstRows;
    for await (const summaries of rest(signal)) yield await pageRows(summaries);
  };
  return { head, batches };
}

/**
 * `GET/POST /{db}/_local_docs`: the `_local/` documents with `_all_docs`'s options; as CouchDB,
 * `total_rows` and `offset` are null.
 */
export async function localDocs(request: Request, services: Services): Promise<Reply> {
  // In a database with per-document access a user lists their own (`OpenedDatabase.listLocal`).
  const opened = await openListing(request, services, true);
  const { keys, query } = await askedListing(request, services);
  const includeDocs = booleanParam(query, 'include_docs');
  const locals = new Map((await opened.listLocal()).map((local) => [local.id, local]));
  const localRow = (id: string): JsonObject => {
    const local = locals.get(id)!;
    const row: JsonObject = { id, key: id, value: { rev: local.rev } };
    if (includeDocs) row['doc'] = { _id: id, _rev: local.rev, ...local.body };
    return row;
  };
  const { descending, limit, skip } = paging(query);
  if (keys !== undefined) {
    const rows = orderedKeys(keys, descending, services.config).map((item) => (typeof item === 'string' && locals.has(item) ? localRow(item) : { key: item, error: 'not_found' }));
    return json(200, { total_rows: null, offset: null, rows: rows.slice(skip, limit === undefined ? undefined : skip + limit) });
  }
  const key = jsonParam(query, 'key');
  const ids = selectRange([...locals.keys()], {
    startKey: key ?? jsonParam(query, 'startkey', 'start_key'),
    endKey: key ?? jsonParam(query, 'endkey', 'end_key'),
    descending,
    inclusiveEnd: booleanParam(query, 'inclusive_end', true),
    limit,
    skip,
  });
  return json(200, { total_rows: null, offset: null, rows: ids.map(localRow) });
}
