/**
 * `_index`: listing, creating and deleting json and nouveau indexes. Creating one writes (or updates) its design
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
import { nouveauDefinition, nouveauMember } from './nouveau-index.js';
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
  const type = body['type'] ?? 'json';
  // CouchDB's text Mango indexes need its Clouseau service; without one it answers 503.
  if (type === 'text') throw indexServiceUnavailable(type);
  if (type === 'nouveau') return createNouveauIndex(opened, body, nouveauDefinition(definition));
  if (!isObject(definition)) throw invalidIndexJson(definition);
  if (type !== 'json') throw invalidIndexType(type);
  for (const key of Object.keys(definition)) if (key !== 'fields' && key !== 'partial_filter_selector') throw invalidKey(key);
  if (definition['fields'] === undefined) throw missingRequiredKey('fields');
  const fields = parseSort(definition['fields']);
  if (fields.length === 0) throw invalidSortJson(definition['fields']);
  const partial = definition['partial_filter_selector'];
  if (partial !== undefined) mangoSelector(partial);
  // Stored in normal form (`{"type": "x"}` as `{"type": {"$eq": "x"}}`), as CouchDB stores it.
  const partialFilter = isObject(partial) && Object.keys(partial).length > 0 ? conjunctionJson(normalize(partial)) : undefined;
  return addToDesign(opened, body, 'views', indexView(fields, partialFilter, definition));
}

/** A nouveau index: `nouveau.{name}` of the design document, as mango_idx_nouveau:add writes it. */
function createNouveauIndex(opened: OpenedDatabase, body: JsonObject, definition: JsonObject): Promise<JsonObject> {
  return addToDesign(opened, body, 'nouveau', nouveauMember(definition));
}

/** Writes the index into `member` of its design document (created when missing); `exists` when it is there already. */
async function addToDesign(opened: OpenedDatabase, body: JsonObject, member: 'views' | 'nouveau', entry: JsonObject): Promise<JsonObject> {
  // CouchDB hashes the whole request (so two names for one definition get two design documents).
  const generated = createHash('sha1').update(JSON.stringify(Object.entries(body).sort(([a], [b]) => (a < b ? -1 : 1)))).digest('hex');
  const id = designId(optionalName(body, 'ddoc') ?? generated);
  const name = optionalName(body, 'name') ?? generated;
  const stored = await opened.storage.readDocument(opened.db, id);
  const created = stored === undefined || stored.deleted;
  const fresh: JsonObject = member === 'views' ? { _id: id, language: 'query', views: {} } : { _id: id, language: 'query' };
  const current = withPartitionedOption(created ? fresh : { _id: id, _rev: stored.rev, ...stored.body }, body['partitioned'], created);
  if (current['language'] !== 'query') throw invalidDdocLanguage(current['language'] ?? null);
  const entries = isObject(current[member]) ? current[member] : {};
  if (JSON.stringify(entries[name]) === JSON.stringify(entry)) return { result: 'exists', id, name };
  await saveDesign(opened, { ...current, [member]: { ...entries, [name]: entry } });
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

/**
 * Removes the json and nouveau indexes of a design document (of one type and name when given);
 * false when it holds no such index. A nouveau index goes from `nouveau` (dropped once empty), a
 * json one from `views`; a design document left with nothing but its language is deleted.
 */
async function removeIndex(opened: OpenedDatabase, ddoc: string, only?: { type: string; name: string }): Promise<boolean> {
  const indexes = await listIndexes(opened);
  const removed = indexes.filter((index) => index.ddoc === ddoc && (only === undefined || (index.type === only.type && index.name === only.name)));
  if (removed.length === 0) return false;
  const stored = await opened.storage.readDocument(opened.db, ddoc);
  if (stored === undefined || stored.deleted) return false;
  const views = { ...(isObject(stored.body['views']) ? stored.body['views'] : {}) };
  const nouveau = { ...(isObject(stored.body['nouveau']) ? stored.body['nouveau'] : {}) };
  for (const index of removed) delete (index.type === 'nouveau' ? nouveau : views)[index.name];
  const rest: JsonObject = { ...stored.body };
  if (isObject(stored.body['views'])) rest['views'] = views;
  if (Object.keys(nouveau).length > 0) rest['nouveau'] = nouveau;
  else delete rest['nouveau'];
  const onlyLanguage = Object.keys(views).length === 0 && Object.keys(rest).every((key) => key === 'language' || key === 'views');
  await saveDesign(opened, onlyLanguage ? { _id: ddoc, _rev: stored.rev, _deleted: true } : { _id: ddoc, _rev: stored.rev, ...rest });
  const kept = new Set(indexes.filter((index) => !removed.includes(index)).map((index) => index.signature));
  for (const index of removed) {
    if (kept.has(index.signature)) continue;
    if (index.type === 'nouveau') await opened.storage.search.drop(opened.db, [index.signature]);
    else await opened.storage.indexes.drop(opened.db, index.signature);
  }
  return true;
}

/** `DELETE /{db}/_index/{ddoc}/{json|nouveau}/{name}`: 404 `missing` when there is no such index. */
export async function deleteIndex(opened: OpenedDatabase, ddoc: string, type: string, name: string): Promise<JsonObject> {
  if ((type !== 'json' && type !== 'nouveau') || !(await removeIndex(opened, designId(ddoc), { type, name }))) throw notFound('missing');
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
    if (await removeIndex(opened, id)) success.push({ id, ok: true });
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
