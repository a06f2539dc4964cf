import { sequencesOf } from '../../databases/sequences.js';
import type { DocumentSummary, RangeOptions, ReadFilter } from '../../databases/types.js';
import type { OpenedDatabase } from '../../databases/opened-database.js';
import { badRequest, requestBodyNotObject } from '../../errors/catalog.js';
import { queryParseError } from '../../errors/query-errors.js';
import type { Json, JsonObject } from '../../json/json.js';
import { readBulkJson } from '../bulk-body.js';
import { openListing } from '../document-path.js';
import { compareIdToKey } from '../key-range.js';
import { booleanParam, jsonParam, nonNegativeIntegerParam } from '../query.js';
import { json, type Reply } from '../reply.js';
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
function documentShape(opened: OpenedDatabase, includeDocs: boolean, conflicts: boolean) {
  return async (summaries: readonly (DocumentSummary | undefined)[]): Promise<(JsonObject | undefined)[]> => {
    const shownIds = summaries.flatMap((summary) => (summary?.body && !summary.deleted ? [summary.id] : []));
    const conflictsById = conflicts && shownIds.length > 0 ? await opened.conflicts(shownIds) : new Map<string, string[]>();
    return summaries.map((summary) => summary && row(summary, includeDocs, opened.view, conflictsById.get(summary.id)));
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

/** `GET/POST /{db}/_all_docs`. */
export async function allDocs(request: Request, services: Services): Promise<Reply> {
  const opened = await openListing(request, services);
  const query = request.query;
  let keys = jsonParam(query, 'keys');
  if (request.method === 'POST') {
    const body = await readBulkJson(request, services.config);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw requestBodyNotObject();
    if ('keys' in body) keys = (body as JsonObject)['keys'];
  }
  // `key` is a range of one key, as CouchDB's: a deleted or missing document gives no row.
  const key = jsonParam(query, 'key');
  const startKey = key !== undefined ? key : jsonParam(query, 'startkey', 'start_key');
  const endKey = key !== undefined ? key : jsonParam(query, 'endkey', 'end_key');
  if (Array.isArray(keys) && keys.length > 0 && !compatibleWithKeys(keys, startKey, endKey)) {
    throw queryParseError('`keys` is incompatible with `key`, `start_key` and `end_key`');
  }
  const includeDocs = booleanParam(query, 'include_docs');
  const withAttachments = includeDocs && booleanParam(query, 'attachments');
  const shown = documentShape(opened, includeDocs, includeDocs && booleanParam(query, 'conflicts'));
  const descending = booleanParam(query, 'descending');
  const limit = nonNegativeIntegerParam(query, 'limit');
  const skip = nonNegativeIntegerParam(query, 'skip') ?? 0;

  if (keys !== undefined) {
    if (!Array.isArray(keys)) throw badRequest('`keys` member must be an array.');
    const ordered = descending ? [...keys].reverse() : keys;
    // An id with NUL cannot exist (and PostgreSQL cannot look one up): like a non-string, not found.
    const ids = ordered.map((item) => (typeof item === 'string' && !item.includes('\u0000') ? item : ''));
    const found = await opened.lookupDocuments(ids, includeDocs);
    const rows = await shown(found.map((summary, index) => (typeof ordered[index] === 'string' ? summary : undefined)));
    if (withAttachments) await opened.inlineListedDocs(rows);
    const listed = ordered.map((item, index) => rows[index] ?? { key: item, error: 'not_found' });
    const info = await opened.info();
    const selected = listed.slice(skip, limit === undefined ? undefined : skip + limit);
    return json(200, { total_rows: info?.docCount ?? 0, offset: null, rows: selected });
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
  const result = await opened.listDocuments(options);
  const rows = (await shown(result.rows)).filter((entry): entry is JsonObject => entry !== undefined);
  if (withAttachments) await opened.inlineListedDocs(rows);
  const body: JsonObject = { total_rows: result.totalRows, offset: result.offset, rows };
  if (booleanParam(query, 'update_seq')) {
    const info = await opened.info();
    body['update_seq'] = sequencesOf(info).format(info?.updateSeq ?? 0);
  }
  return json(200, body);
}
