/**
 * The views of one design document as an index sees them: the distinct map functions (views with
 * the same map function and options share their rows, as CouchDB's), each view's reduce, and the
 * signature (md5 of everything that changes the rows: language, map and reduce functions, view
 * options, design options and `views.lib`). Editing anything else in the design document keeps
 * the signature, so the index survives the edit.
 */
import { createHash } from 'node:crypto';
import type { Json, JsonObject } from '../json/json.js';
import { isObject } from '../documents/document-json.js';
import { collationOf, type KeyCollation } from '../collation/key-collation.js';

interface ViewDefinition {
  name: string;
  /** Number of the map function (the `view` column of the stored rows). */
  map: number;
  /** The reduce function's source (a built-in name or JavaScript), absent for a map-only view. */
  reduce?: string;
}

export interface ViewGroup {
  /** `_design/…`. */
  id: string;
  signature: string;
  language: string;
  /**
   * The map functions' sources, numbered by position, with the name of one view using each and the
   * collation of its keys (`options.collation`, part of what makes two views share their rows).
   */
  maps: { source: string; view: string; collation: KeyCollation }[];
  views: Map<string, ViewDefinition>;
  /** The design document as stored, for the sandbox. */
  doc: JsonObject;
  /**
   * Rows keyed by the document's partition first (a partitioned database's design document
   * without `options.partitioned: false`), so that a partition is one key range of the index.
   */
  partitioned: boolean;
}

/** Object members in name order, so the signature does not depend on the members' order. */
function canonical(value: Json | undefined): Json | null {
  if (value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => canonical(item));
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.keys(value).sort().map((name) => [name, canonical(value[name])]));
}

/** The views of a design document; views whose `map` is not a string are left out (as CouchDB). */
export function viewGroupOf(doc: JsonObject, partitioned = false): ViewGroup {
  const views = isObject(doc['views']) ? doc['views'] : {};
  const language = typeof doc['language'] === 'string' ? doc['language'] : 'javascript';
  const maps: { source: string; view: string; options: string; collation: KeyCollation }[] = [];
  const definitions = new Map<string, ViewDefinition>();
  const signed: Json[] = [];
  for (const name of Object.keys(views).sort()) {
    const view = views[name];
    if (name === 'lib' || !isObject(view) || typeof view['map'] !== 'string') continue;
    const options = JSON.stringify(canonical(view['options']));
    let map = maps.findIndex((entry) => entry.source === view['map'] && entry.options === options);
    if (map < 0) map = maps.push({ source: view['map'], view: name, options, collation: collationOf(view['options']) }) - 1;
    const reduce = typeof view['reduce'] === 'string' ? view['reduce'] : undefined;
    definitions.set(name, { name, map, ...(reduce === undefined ? {} : { reduce }) });
    signed.push([name, view['map'], reduce ?? null, canonical(view['options'])]);
  }
  const lib = isObject(views['lib']) ? canonical(views['lib']) : null;
  const signature = createHash('md5')
    .update(JSON.stringify([language, canonical(doc['options']), signed, lib]))
    .digest('hex');
  return { id: String(doc['_id']), signature, language, maps: maps.map(({ source, view, collation }) => ({ source, view, collation })), views: definitions, doc, partitioned };
}
