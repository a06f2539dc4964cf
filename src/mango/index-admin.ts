/**
 * `_index`: listing, creating and deleting json indexes. Creating one writes (or updates) its design
 * document through the database layer, so only database admins may, and the write replicates like
 * any other; deleting one removes its view (the whole design document when it was the last) and
 * drops its rows from storage when no other index has the same definition.
 */
import { createHash } from 'node:crypto';
import type { OpenedDatabase } from '../databases/opened-database.js';
import { writeDocument } from '../databases/document-writes.js';
import { isObject } from '../documents/document-json.js';
import { isCouchError } from '../errors/couch-error.js';
import { notFound } from '../errors/catalog.js';
import {
  ddocSaveConflict,
  emptyIndexName,
  invalidBoolean,
  invalidBulkDelete,
  invalidDdocLanguage,
  invalidIndexJson,
  invalidIndexName,
  invalidIndexType,
  indexServiceUnavailable,
  invalidKey,
  invalidListParams,
  invalidSortJson,
  missingRequiredKey,
  partitionedOptionMismatch,
} from '../errors/mango-errors.js';
import type { Json, JsonObject } from '../json/json.js';
import { mangoSelector } from './find-request.js';
import { listIndexes } from './index-catalog.js';
import { ALL_DOCS_INDEX, indexJson, indexView, sortIndexes } from './index-definitions.js';
import { conjunctionJson, normalize } from './selector-analysis.js';
import { parseSort } from './sort.js';

const CREATE_KEYS = new Set(['index', 'ddoc', 'name', 'type', 'w', 'partitioned']);

function optionalName(body: JsonObject, key: string): string | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidIndexName(value);
  if (value === '') throw emptyIndexName();
  return value;
}

function designId(name: string): string {
  return name.startsWith('_design/') ? name : `_design/${name}`;
}

/** `POST /{db}/_index`: `{"result": "created"|"exists", "id", "name"}`. */
export async function createIndex(opened: OpenedDatabase, body: JsonObject): Promise<JsonObject> {
  for (const key of Object.keys(body)) if (!CREATE_KEYS.has(key)) throw invalidKey(key);
  const definition = body['index'];
  if (definition === undefined) throw missingRequiredKey('index');
  if (!isObject(definition)) throw invalidIndexJson(definition);
  const type = body['type'] ?? 'json';
  // CouchDB's text and nouveau Mango indexes need its Clouseau or Nouveau service; without one it answers 503.
  if (type === 'text' || type === 'nouveau') throw indexServiceUnavailable(type);
  if (type !== 'json') throw invalidIndexType(type);
  for (const key of Object.keys(definition)) if (key !== 'fields' && key !== 'partial_filter_selector') throw invalidKey(key);
  if (definition['fields'] === undefined) throw missingRequiredKey('fields');
  const fields = parseSort(definition['fields']);
  if (fields.length === 0) throw invalidSortJson(definition['fields']);
  const partial = definition['partial_filter_selector'];
  if (partial !== undefined) mangoSelector(partial);
  // Stored in normal form (`{"type": "x"}` as `{"type": {"$eq": "x"}}`), as CouchDB stores it.
  const partialFilter = isObject(partial) && Object.keys(partial).length > 0 ? conjunctionJson(normalize(partial)) : undefined;
  // CouchDB hashes the whole request (so two names for one definition get two design documents).
  const generated = createHash('sha1').update(JSON.stringify(Object.entries(body).sort(([a], [b]) => (a < b ? -1 : 1)))).digest('hex');
  const id = designId(optionalName(body, 'ddoc') ?? generated);
  const name = optionalName(body, 'name') ?? generated;
  const view = indexView(fields, partialFilter, definition);
  const stored = await opened.storage.readDocument(opened.db, id);
  const created = stored === undefined || stored.deleted;
  const current = withPartitionedOption(created ? { _id: id, language: 'query', views: {} } : { _id: id, _rev: stored.rev, ...stored.body }, body['partitioned'], created);
  if (current['language'] !== 'query') throw invalidDdocLanguage(current['language'] ?? null);
  const views = isObject(current['views']) ? current['views'] : {};
  if (JSON.stringify(views[name]) === JSON.stringify(view)) return { result: 'exists', id, name };
  await saveDesign(opened, { ...current, views: { ...views, [name]: view } });
  return { result: 'created', id, name };
}

/**
 * mango_idx's set_ddoc_partitioned: `partitioned` (absent: the database's default) is written into
 * a new design document's `options`, and must agree with an existing one's.
 */
function withPartitionedOption(ddoc: JsonObject, asked: Json | undefined, created: boolean): JsonObject {
  if (asked !== undefined && typeof asked !== 'boolean') throw invalidBoolean(asked);
  const options = isObject(ddoc['options']) ? ddoc['options'] : undefined;
  const current = options?.['partitioned'];
  if (asked === current) return ddoc;
  if (!created) throw partitionedOptionMismatch(String(ddoc['_id']));
  return asked === undefined ? ddoc : { ...ddoc, options: { ...options, partitioned: asked } };
}

async function saveDesign(opened: OpenedDatabase, doc: JsonObject): Promise<void> {
  try {
    await writeDocument(opened, doc, { newEdits: true });
  } catch (error) {
    if (isCouchError(error) && error.error === 'conflict') throw ddocSaveConflict();
    throw error;
  }
}

/** Removes one json index; false when the design document holds no such index. */
async function removeIndex(opened: OpenedDatabase, ddoc: string, name: string | undefined): Promise<boolean> {
  const indexes = await listIndexes(opened);
  const removed = indexes.filter((index) => index.ddoc === ddoc && (name === undefined || index.name === name));
  if (removed.length === 0) return false;
  const stored = await opened.storage.readDocument(opened.db, ddoc);
  if (stored === undefined || stored.deleted) return false;
  const views = { ...(isObject(stored.body['views']) ? stored.body['views'] : {}) };
  for (const index of removed) delete views[index.name];
  const rest = { ...stored.body, views };
  const onlyLanguage = Object.keys(views).length === 0 && Object.keys(rest).every((key) => key === 'language' || key === 'views');
  await saveDesign(opened, onlyLanguage ? { _id: ddoc, _rev: stored.rev, _deleted: true } : { _id: ddoc, _rev: stored.rev, ...rest });
  const kept = new Set(indexes.filter((index) => !removed.includes(index)).map((index) => index.signature));
  for (const index of removed) {
    if (!kept.has(index.signature)) await opened.storage.indexes.drop(opened.db, index.signature);
  }
  return true;
}

/** `DELETE /{db}/_index/{ddoc}/json/{name}`: 404 `missing` when there is no such index. */
export async function deleteIndex(opened: OpenedDatabase, ddoc: string, type: string, name: string): Promise<JsonObject> {
  if (type !== 'json' || !(await removeIndex(opened, designId(ddoc), name))) throw notFound('missing');
  return { ok: true };
}

/** `POST /{db}/_index/_bulk_delete` with `{"docids": [...]}`: per design document, success or failure. */
export async function bulkDeleteIndexes(opened: OpenedDatabase, body: JsonObject): Promise<JsonObject> {
  for (const key of Object.keys(body)) if (key !== 'docids' && key !== 'w') throw invalidKey(key);
  const ids: Json = body['docids'] ?? [];
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) throw invalidBulkDelete(ids);
  const success: Json[] = [];
  const fail: Json[] = [];
  for (const raw of ids as string[]) {
    const id = designId(raw);
    if (await removeIndex(opened, id, undefined)) success.push({ id, ok: true });
    else fail.push({ id, error: 'not_found' });
  }
  return { success, fail };
}

/** `GET /{db}/_index?limit=&skip=`: `_all_docs` first, then every json index by design document and name. */
export async function indexListing(opened: OpenedDatabase, limit: number | undefined, skip: number): Promise<JsonObject> {
  const all = [ALL_DOCS_INDEX, ...sortIndexes(await listIndexes(opened))];
  if ((limit !== undefined && limit < 1) || skip < 0) throw invalidListParams();
  const shown = all.slice(Math.min(skip, all.length), limit === undefined ? undefined : Math.min(skip, all.length) + limit);
  return { total_rows: all.length, indexes: shown.map(indexJson) };
}
