/**
 * The index function of a nouveau Mango index, in the form the search indexer takes from the
 * sandbox: one outcome per document, its value the fields (nouveau-fields.ts).
 */
import { isObject } from '../documents/document-json.js';
import type { Json, JsonObject } from '../json/json.js';
import type { FunctionOutcome } from '../views/view-functions.js';
import { fieldPlanOf, nouveauFieldsOf } from './nouveau-fields.js';

/** `path`: `['nouveau', name, 'index']` of `ddoc`, as the indexer names a function. */
export function mangoIndexFunction(ddoc: JsonObject, path: readonly string[], docs: readonly JsonObject[]): FunctionOutcome[] {
  let definition: Json | undefined = ddoc;
  for (const part of path) definition = isObject(definition) ? definition[part] : undefined;
  if (!isObject(definition)) return docs.map(() => ({ ok: false, kind: 'error', error: 'not a nouveau Mango index', logs: [] }));
  const plan = fieldPlanOf(definition);
  return docs.map((doc) => ({ ok: true, value: nouveauFieldsOf(plan, doc) as unknown as Json, logs: [] }));
}
