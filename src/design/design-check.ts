import type { JsonObject } from '../json/json.js';
import type { DesignDoc } from '../js/sandbox.js';
import type { NamedFunction } from './function-types/function-type.js';
import { DESIGN_FUNCTION_TYPES } from './registry.js';

/**
 * The JavaScript functions of a design document that are compiled on save, of every registered
 * type. Other languages are not checked.
 */
export function functionsOf(ddoc: JsonObject): NamedFunction[] {
  const language = ddoc['language'];
  if (language !== undefined && language !== 'javascript') return [];
  return DESIGN_FUNCTION_TYPES.flatMap((type) => type.functionsIn(ddoc));
}

/** The design document as the sandbox loads it before it has a revision of its own. */
export function unsaved(doc: JsonObject): DesignDoc {
  return { ...doc, _id: String(doc['_id']), _rev: '0-unsaved' };
}
