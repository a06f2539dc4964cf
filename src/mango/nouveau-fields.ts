/**
 * The fields a nouveau Mango index holds for a document (CouchDB's `mango_native_proc`
 * `nouveau_index_doc`): the index function of a `language: "query"` design document, computed here
 * instead of in the JavaScript sandbox, and handed to the search indexer in the same form an
 * `index()` call gives (`{type, name, value}`).
 *
 * Every leaf value of the document (or of the listed `fields` only) becomes a field named after its
 * path and type, each part escaped (`address.city:string` → `address.city_3astring`, array elements
 * as `[]`): strings and booleans (`"true"`, `"false"`) as string fields, numbers as double fields.
 * With `index_array_lengths` (default) each array adds its length (`tags.[]:length`, a double). With
 * the default field enabled (default) every string is also text under `$default`, which `$text`
 * searches. `$fieldnames` (a string field) holds the name of every field the document has, which
 * existence queries search. A `partial_filter_selector` (or the older `selector`) leaves out the
 * documents it does not match.
 *
 * Where CouchDB 3.5.0's fails the whole document (a `null`, or an array length under a nouveau
 * index), Divan indexes `null` as the string `"true"` (as its query asks) and lengths as numbers.
 */
import { isObject } from '../documents/document-json.js';
import { matchesSelector, parseSelector, type Selector } from '../documents/selector.js';
import type { Json, JsonObject } from '../json/json.js';
import { escapeFieldName, escapeFieldPart } from './text-query.js';

interface IndexedField {
  type: 'string' | 'text' | 'double';
  name: string;
  value: string | number;
}

/** What a definition asks of every document, read once per index. */
interface NouveauFieldPlan {
  /** Escaped `name:type` of the listed fields; undefined: every field. */
  only: ReadonlySet<string> | undefined;
  defaultField: boolean;
  arrayLengths: boolean;
  partial: Selector | undefined;
}

const TYPES = new Set(['number', 'boolean', 'text']);

/** The stored definition's partial filter (`partial_filter_selector`, else the older `selector`), if any. */
export function partialFilterOf(definition: JsonObject): JsonObject | undefined {
  for (const key of ['partial_filter_selector', 'selector']) {
    const value = definition[key];
    if (isObject(value) && Object.keys(value).length > 0) return value;
  }
  return undefined;
}

/** mango_native_proc's default field switch: `default_field` true, false, or `{"enabled": …}`. */
export function defaultFieldEnabled(definition: JsonObject): boolean {
  const option = definition['default_field'];
  if (typeof option === 'boolean') return option;
  return isObject(option) && option['enabled'] === false ? false : true;
}

export function fieldPlanOf(definition: JsonObject): NouveauFieldPlan {
  const fields = definition['fields'];
  const only = Array.isArray(fields)
    ? new Set(
        fields.flatMap((spec) => {
          if (!isObject(spec) || typeof spec['name'] !== 'string') return [];
          const type = typeof spec['type'] === 'string' && TYPES.has(spec['type']) ? spec['type'] : 'string';
          return [escapeFieldName(`${spec['name']}:${type}`)];
        }),
      )
    : undefined;
  const partial = partialFilterOf(definition);
  return { only, defaultField: defaultFieldEnabled(definition), arrayLengths: definition['index_array_lengths'] !== false, partial: partial === undefined ? undefined : parseSelector(partial) };
}

const nameOf = (path: readonly string[], type: string): string => [...path.slice(0, -1), `${path[path.length - 1]}:${type}`].map(escapeFieldPart).join('.');

function leaves(plan: NouveauFieldPlan, value: Json, path: string[], into: IndexedField[]): void {
  const add = (type: IndexedField['type'], kind: string, indexed: string | number): void => {
    if (path.length === 0) return;
    const name = nameOf(path, kind);
    if (plan.only === undefined || plan.only.has(name)) into.push({ type, name, value: indexed });
  };
  if (Array.isArray(value)) {
    const inArray = [...path, '[]'];
    // The length bypasses the field list, as in CouchDB.
    if (plan.arrayLengths && path.length > 0) into.push({ type: 'double', name: nameOf(inArray, 'length'), value: value.length });
    for (const item of value) leaves(plan, item, inArray, into);
  } else if (isObject(value)) {
    for (const [key, member] of Object.entries(value)) leaves(plan, member, [...path, key], into);
  } else if (typeof value === 'string') add('string', 'string', value);
  else if (typeof value === 'number') add('double', 'number', value);
  else if (typeof value === 'boolean') add('string', 'boolean', String(value));
  else add('string', 'null', 'true');
}

/** The fields of one document (none for a design document or one the partial filter leaves out). */
export function nouveauFieldsOf(plan: NouveauFieldPlan, doc: JsonObject): IndexedField[] {
  if (String(doc['_id']).startsWith('_design/')) return [];
  if (plan.partial !== undefined && !matchesSelector(plan.partial, doc)) return [];
  const fields: IndexedField[] = [];
  leaves(plan, doc, [], fields);
  const texts: IndexedField[] = plan.defaultField ? fields.filter((each) => each.type === 'string' && each.name.endsWith('_3astring')).map((each) => ({ type: 'text', name: '$default', value: each.value })) : [];
  const all = [...texts, ...fields];
  const names = [...new Set(all.map((each) => each.name))].sort();
  return [...names.map((name): IndexedField => ({ type: 'string', name: '$fieldnames', value: name })), ...all];
}
