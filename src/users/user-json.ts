import type { Json, JsonObject } from '../storage/storage.js';

/**
 * A member of a user-supplied object, never one inherited from Object.prototype: `doc.constructor`
 * or `doc.toString` must read as absent, not as a function.
 */
export function own(object: JsonObject, key: string): Json | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

export function isJsonObject(value: Json | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * JavaScript's `String(value)` for JSON values, as CouchDB's JS validation function concatenates
 * them, but without calling a `toString` member a hostile object could carry.
 */
export function jsString(value: Json | undefined): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.map((item) => (item === null ? '' : jsString(item))).join(',');
  if (typeof value === 'object') return '[object Object]';
  return String(value);
}
