/**
 * Nouveau Mango indexes as CouchDB 3.5 keeps them (`mango_idx_nouveau`): a `language: "query"`
 * design document's `nouveau.{name}` member `{"index": definition, "analyzer": …}`, so they
 * replicate to and from CouchDB unchanged. The definition, checked and completed with its defaults
 * on creation: `default_analyzer` ("keyword"), `default_field` ({}), `partial_filter_selector` and
 * the older `selector` (normal form), `fields` (`[{"name", "type"}]` with type `text`, `string`,
 * `number` or `boolean`; `"all_fields"` for every field) and `index_array_lengths` (true).
 *
 * Each is also a search index (src/search/search-index.ts) whose fields nouveau-fields.ts derives.
 */
import { isObject } from '../documents/document-json.js';
import { invalidBoolean, invalidIndexFieldsDefinition, invalidIndexText, invalidKey } from '../errors/mango-errors.js';
import type { Json, JsonObject } from '../json/json.js';
import { searchIndexOf, type SearchIndex } from '../search/search-index.js';
import { mangoSelector } from './find-request.js';
import { defaultFieldEnabled, partialFilterOf } from './nouveau-fields.js';
import { conjunctionJson, normalize } from './selector-analysis.js';
import { textIndexableFields } from './text-query.js';

const FIELD_TYPES = new Set(['text', 'string', 'number', 'boolean']);
const KEYS = ['default_analyzer', 'default_field', 'partial_filter_selector', 'selector', 'fields', 'index_array_lengths'];

function checkedFields(fields: Json): Json {
  if (fields === 'all_fields' || (Array.isArray(fields) && fields.length === 0)) return 'all_fields';
  const valid = (spec: Json): boolean =>
    isObject(spec) && Object.keys(spec).length === 2 && typeof spec['name'] === 'string' && spec['name'] !== '' && typeof spec['type'] === 'string' && FIELD_TYPES.has(spec['type']);
  if (!Array.isArray(fields) || !fields.every(valid)) throw invalidIndexFieldsDefinition(fields);
  return fields;
}

function selectorOption(value: Json | undefined): JsonObject {
  if (value === undefined) return {};
  mangoSelector(value);
  const selector = value as JsonObject;
  return Object.keys(selector).length === 0 ? {} : conjunctionJson(normalize(selector));
}

/** The definition as stored: checked, with every option (mango_opts with mango_idx_nouveau's options). */
export function nouveauDefinition(definition: Json): JsonObject {
  if (!isObject(definition)) throw invalidIndexText(definition);
  for (const key of Object.keys(definition)) if (!KEYS.includes(key)) throw invalidKey(key);
  const arrayLengths = definition['index_array_lengths'] ?? true;
  if (typeof arrayLengths !== 'boolean') throw invalidBoolean(arrayLengths);
  return {
    default_analyzer: definition['default_analyzer'] ?? 'keyword',
    default_field: definition['default_field'] ?? {},
    partial_filter_selector: selectorOption(definition['partial_filter_selector']),
    selector: selectorOption(definition['selector']),
    fields: checkedFields(definition['fields'] ?? []),
    index_array_lengths: arrayLengths,
  };
}

/** The design document member CouchDB writes: the definition and the analyzer it describes. */
export function nouveauMember(definition: JsonObject): JsonObject {
  const option = definition['default_field'];
  const analyzer = isObject(option) && typeof option['analyzer'] === 'string' ? option['analyzer'] : 'standard';
  return {
    index: definition,
    analyzer: defaultFieldEnabled(definition) ? { name: 'perfield', default: definition['default_analyzer'] ?? 'keyword', fields: { $default: analyzer } } : 'keyword',
  };
}

function storedDefinition(member: Json | undefined): JsonObject | undefined {
  if (!isObject(member) || !isObject(member['index'])) return undefined;
  try {
    nouveauDefinition(member['index']);
    return member['index'];
  } catch {
    // As CouchDB's from_ddoc: a definition it would refuse is no index.
    return undefined;
  }
}

/** A nouveau index as index-definitions.ts's `MangoIndex` describes one. */
interface NouveauMangoIndex {
  ddoc: string;
  name: string;
  type: 'nouveau';
  fields: never[];
  partialFilter: JsonObject | undefined;
  signature: string;
  partitioned: boolean;
  nouveau: { definition: JsonObject; search: SearchIndex };
}

/** The nouveau indexes of a `language: "query"` design document. */
export function nouveauIndexesOf(id: string, body: JsonObject, partitioned: boolean): NouveauMangoIndex[] {
  const members = body['nouveau'];
  if (!isObject(members)) return [];
  return Object.entries(members).flatMap(([name, member]): NouveauMangoIndex[] => {
    const definition = storedDefinition(member);
    if (definition === undefined) return [];
    let search;
    try {
      search = searchIndexOf({ ...body, _id: id }, name, partitioned);
    } catch {
      return [];
    }
    return [{ ddoc: id, name, type: 'nouveau', fields: [], partialFilter: partialFilterOf(definition), signature: search.signature, partitioned, nouveau: { definition, search } }];
  });
}

/** The index as `_index` and `_explain` show it (mango_idx_nouveau:to_json). */
export function nouveauIndexJson(index: { ddoc: string | null; name: string; partitioned?: boolean }, definition: JsonObject): JsonObject {
  const def: JsonObject = {};
  for (const [key, value] of Object.entries(definition)) {
    if (key === 'fields') def[key] = Array.isArray(value) ? value.map((spec) => ({ [String((spec as JsonObject)['name'])]: (spec as JsonObject)['type']! })) : [];
    else if (!(key === 'partial_filter_selector' && isObject(value) && Object.keys(value).length === 0)) def[key] = value;
  }
  return { ddoc: index.ddoc, name: index.name, type: 'nouveau', partitioned: index.partitioned === true, def };
}

/** The `name:type` columns of the index (`$default` first when enabled); undefined: every field. */
export function nouveauColumns(definition: JsonObject): string[] | undefined {
  const fields = definition['fields'];
  if (!Array.isArray(fields)) return undefined;
  const named = fields.map((spec) => `${String((spec as JsonObject)['name'])}:${String((spec as JsonObject)['type'])}`);
  return defaultFieldEnabled(definition) ? ['$default', ...named] : named;
}

/** Why the index cannot serve a selector in normal form (mango_idx_nouveau:is_usable), or nothing. */
export function nouveauUnusable(definition: JsonObject, normal: JsonObject): string[] {
  if (Object.keys(normal).length === 0) return ['empty_selector'];
  const columns = nouveauColumns(definition);
  if (columns === undefined) return [];
  return textIndexableFields(normal).every((field) => columns.includes(field)) ? [] : ['field_mismatch'];
}
