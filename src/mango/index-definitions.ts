/**
 * Mango indexes as CouchDB stores them: a design document with `language: "query"` whose views
 * each hold one json index (`map.fields` in order, `map.partial_filter_selector`, `reduce: "_count"`,
 * `options.def` as the client sent it), so they replicate to and from CouchDB unchanged. Plus the
 * special `_all_docs` index every database has.
 */
import { createHash } from 'node:crypto';
import { isObject } from '../documents/document-json.js';
import { matchesSelector, parseSelector, type Selector } from '../documents/selector.js';
import { fieldPath, lookup } from '../documents/selector-match.js';
import type { Json, JsonObject } from '../json/json.js';
import { encodeKey, KEY_ENCODING_VERSION, storedKey } from './index-keys.js';
import { sortJson, type SortField } from './sort.js';
import { partitionKeyPrefix, partitionOf } from '../databases/partitions.js';
import type { SearchIndex } from '../search/search-index.js';
import { nouveauIndexesOf, nouveauIndexJson } from './nouveau-index.js';

export interface MangoIndex {
  /** `_design/…`; null for `_all_docs`. */
  ddoc: string | null;
  name: string;
  type: 'json' | 'special' | 'nouveau';
  /** The index columns, in order. */
  fields: SortField[];
  partialFilter: JsonObject | undefined;
  /** Names the index's rows in storage: the same definition anywhere shares one set of rows. */
  signature: string;
  /** Rows keyed by the document's partition first (partitions.ts): for partition queries only. Absent: global. */
  partitioned?: boolean;
  /** A nouveau index's stored definition and the search index that holds it (nouveau-index.ts). */
  nouveau?: { definition: JsonObject; search: SearchIndex };
}

/** The index over document ids that every database has. */
export const ALL_DOCS_INDEX: MangoIndex = Object.freeze({
  ddoc: null,
  name: '_all_docs',
  type: 'special',
  fields: [{ field: '_id', direction: 'asc' as const }],
  partialFilter: undefined,
  signature: '_all_docs',
});

/** The fields, the partial filter and the key encoding: what the rows depend on. */
export function signatureOf(fields: readonly SortField[], partialFilter: JsonObject | undefined, partitioned = false): string {
  const definition = JSON.stringify([fields.map((field) => field.field), partialFilter ?? {}, KEY_ENCODING_VERSION, ...(partitioned ? ['partitioned'] : [])]);
  return createHash('sha256').update(definition).digest('hex').slice(0, 32);
}

function viewIndex(ddoc: string, name: string, view: Json | undefined, partitioned: boolean): MangoIndex | undefined {
  if (!isObject(view) || !isObject(view['map'])) return undefined;
  const map = view['map'];
  const fieldsObject = map['fields'];
  if (!isObject(fieldsObject)) return undefined;
  const fields: SortField[] = [];
  for (const [field, direction] of Object.entries(fieldsObject)) {
    fields.push({ field, direction: direction === 'desc' ? 'desc' : 'asc' });
  }
  if (fields.length === 0) return undefined;
  const partial = map['partial_filter_selector'];
  const partialFilter = isObject(partial) && Object.keys(partial).length > 0 ? partial : undefined;
  return { ddoc, name, type: 'json', fields, partialFilter, signature: signatureOf(fields, partialFilter, partitioned), partitioned };
}

/** The json and nouveau indexes of one design document (none unless its language is `query`); `partitioned`: its indexes are. */
export function indexesOfDesignDoc(id: string, body: JsonObject, partitioned = false): MangoIndex[] {
  if (body['language'] !== 'query') return [];
  const views = isObject(body['views']) ? body['views'] : {};
  return [...Object.entries(views).flatMap(([name, view]) => viewIndex(id, name, view, partitioned) ?? []), ...nouveauIndexesOf(id, body, partitioned)];
}

/** CouchDB's order of `GET /{db}/_index`: `_all_docs` first, then by design document and name. */
export function sortIndexes(indexes: MangoIndex[]): MangoIndex[] {
  const key = (index: MangoIndex): string => `${index.ddoc ?? ''}\u0000${index.name}`;
  return indexes.sort((a, b) => (a.ddoc === null ? -1 : b.ddoc === null ? 1 : key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** An index as `_index` and `_explain` show it. */
export function indexJson(index: MangoIndex): JsonObject {
  if (index.nouveau !== undefined) return nouveauIndexJson(index, index.nouveau.definition);
  const def: JsonObject = { fields: sortJson(index.fields) };
  if (index.partialFilter !== undefined) def['partial_filter_selector'] = index.partialFilter;
  if (index.type === 'special') return { ddoc: null, name: index.name, type: 'special', def };
  return { ddoc: index.ddoc, name: index.name, type: 'json', partitioned: index.partitioned === true, def };
}

/** The view CouchDB writes for a json index. */
export function indexView(fields: readonly SortField[], partialFilter: JsonObject | undefined, definition: JsonObject): JsonObject {
  return {
    map: { fields: Object.fromEntries(fields.map((field) => [field.field, field.direction])), partial_filter_selector: partialFilter ?? {} },
    reduce: '_count',
    options: { def: definition },
  };
}

/** What a document contributes to an index: its key, or nothing (a field missing, filtered out). */
export class IndexKeyer {
  readonly #paths: string[][];
  readonly #partial: Selector | undefined;
  readonly #partitioned: boolean;

  constructor(index: MangoIndex) {
    this.#partitioned = index.partitioned === true;
    this.#paths = index.fields.map((field) => fieldPath(field.field));
    this.#partial = index.partialFilter === undefined ? undefined : parseSelector(index.partialFilter);
  }

  keyOf(doc: JsonObject): Uint8Array | undefined {
    const values: Json[] = [];
    for (const path of this.#paths) {
      const value = lookup(doc, path);
      if (value === undefined) return undefined;
      values.push(value);
    }
    if (this.#partial !== undefined && !matchesSelector(this.#partial, doc)) return undefined;
    if (!this.#partitioned) return storedKey(encodeKey(values));
    // Every normal id of a partitioned database has a partition (the write pipeline checks it).
    const partition = partitionOf(String(doc['_id']));
    return partition === undefined ? undefined : storedKey(Buffer.concat([partitionKeyPrefix(partition), encodeKey(values)]));
  }
}
