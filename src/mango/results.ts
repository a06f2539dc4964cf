/**
 * Shaping `_find` results: `fields` projection (`mango_fields`) and bookmarks. A bookmark is opaque
 * to clients (CouchDB's is too): here base64url JSON of the index it belongs to and the position
 * (key bytes and document id) of the last result, so the next page starts right after it.
 */
import { isObject } from '../documents/document-json.js';
import { fieldPath, lookup } from '../documents/selector-match.js';
import { invalidBookmark } from '../errors/mango-errors.js';
import type { Json, JsonObject } from '../json/json.js';
import type { IndexPosition } from '../storage/storage.js';

/** The requested fields of a document, nested as in the document; missing ones left out. */
export function project(doc: JsonObject, fields: readonly string[] | undefined): JsonObject {
  if (fields === undefined) return doc;
  const result: JsonObject = {};
  for (const field of fields) {
    const path = fieldPath(field);
    const value = lookup(doc, path);
    if (value === undefined) continue;
    let target = result;
    for (const part of path.slice(0, -1)) {
      const next = target[part];
      if (!isObject(next)) target[part] = {};
      target = target[part] as JsonObject;
    }
    target[path[path.length - 1]!] = value;
  }
  return result;
}

export function encodeBookmark(signature: string, position: IndexPosition | undefined): string {
  if (position === undefined) return 'nil';
  const json: Json = { i: signature, k: Buffer.from(position.key).toString('hex'), d: position.id };
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

/** The position a bookmark names; 400 `invalid_bookmark` when it is not one of this index's. */
export function decodeBookmark(bookmark: string, signature: string): IndexPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bookmark, 'base64url').toString('utf8'));
  } catch {
    throw invalidBookmark(bookmark);
  }
  if (!isObject(parsed as Json)) throw invalidBookmark(bookmark);
  const { i, k, d } = parsed as JsonObject;
  if (i !== signature || typeof k !== 'string' || !/^(?:[0-9a-f]{2})*$/.test(k) || typeof d !== 'string') throw invalidBookmark(bookmark);
  return { key: Uint8Array.from(Buffer.from(k, 'hex')), id: d };
}
