/**
 * Mango sort specs (`mango_sort`): `["a", {"b": "desc"}]`, one direction for every field. Index
 * definitions use the same syntax for their fields.
 */
import { isObject } from '../documents/document-json.js';
import { invalidSortDirection, invalidSortField, invalidSortJson, mixedSort } from '../errors/mango-errors.js';
import type { Json } from '../json/json.js';

export interface SortField {
  field: string;
  direction: 'asc' | 'desc';
}

function sortField(spec: Json): SortField {
  if (typeof spec === 'string') {
    if (spec === '') throw invalidSortField(spec);
    return { field: spec, direction: 'asc' };
  }
  if (isObject(spec)) {
    const entries = Object.entries(spec);
    if (entries.length !== 1) throw invalidSortField(spec);
    const [field, direction] = entries[0]!;
    if (direction !== 'asc' && direction !== 'desc') throw invalidSortDirection(direction);
    if (field === '') throw invalidSortField(spec);
    return { field, direction };
  }
  throw invalidSortField(spec);
}

/** Parses a sort; refuses mixed directions as CouchDB does. */
export function parseSort(value: Json | undefined): SortField[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidSortJson(value);
  const fields = value.map(sortField);
  if (new Set(fields.map((field) => field.direction)).size > 1) throw mixedSort();
  return fields;
}

/** The sort's direction: descending when every field says `desc`. */
export function isDescending(sort: readonly SortField[]): boolean {
  return sort.length > 0 && sort[0]!.direction === 'desc';
}

/** As an index or `_explain` shows fields: `[{"a": "asc"}]`. */
export function sortJson(sort: readonly SortField[]): Json[] {
  return sort.map((field) => ({ [field.field]: field.direction }));
}
