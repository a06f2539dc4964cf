import type { JsonObject } from '../json/json.js';
import type { DesignDoc, FunctionPath } from './sandbox.js';

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A function of a design document and how CouchDB names it in a compilation error. */
export interface NamedFunction {
  readonly path: FunctionPath;
  /** CouchDB's start of the error reason, the compiler's message follows. */
  readonly prefix: string;
}

/**
 * The JavaScript functions of a design document that are compiled on save: `validate_doc_update`,
 * `filters`, and the views' `map` and (not built-in) `reduce`. Other languages are not checked.
 */
export function functionsOf(ddoc: JsonObject): NamedFunction[] {
  const language = ddoc['language'];
  if (language !== undefined && language !== 'javascript') return [];
  const found: NamedFunction[] = [];
  if (typeof ddoc['validate_doc_update'] === 'string') found.push({ path: ['validate_doc_update'], prefix: 'Compilation of the validate_doc_update function failed: ' });
  const filters = ddoc['filters'];
  if (isObject(filters)) {
    for (const [name, source] of Object.entries(filters)) if (typeof source === 'string') found.push({ path: ['filters', name], prefix: `Compilation of the filter function '${name}' failed: ` });
  }
  const views = ddoc['views'];
  if (!isObject(views)) return found;
  for (const [name, view] of Object.entries(views)) {
    if (!isObject(view)) continue;
    if (typeof view['map'] === 'string') found.push({ path: ['views', name, 'map'], prefix: `Compilation of the map function in the '${name}' view failed: ` });
    const reduce = view['reduce'];
    if (typeof reduce === 'string' && !reduce.startsWith('_')) found.push({ path: ['views', name, 'reduce'], prefix: `Compilation of the reduce function in the '${name}' view failed: ` });
  }
  return found;
}

/** The design document as the sandbox loads it before it has a revision of its own. */
export function unsaved(doc: JsonObject): DesignDoc {
  return { ...doc, _id: String(doc['_id']), _rev: '0-unsaved' };
}
