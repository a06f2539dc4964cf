/**
 * What views need of the JavaScript sandbox (src/js/): map functions over documents (each
 * document's `emit` pairs, or that document's failure alone) and calls of reduce functions. Kept as
 * an interface so the view engine does not depend on how the sandbox runs functions.
 */
import type { Json, JsonObject } from '../json/json.js';

export type FunctionOutcome =
  | { readonly ok: true; readonly value: Json; readonly logs: readonly string[] }
  | { readonly ok: false; readonly kind: string; readonly error: Json; readonly logs: readonly string[] };

/** The functions of one database's design documents (its own sandbox contexts and queue). */
export type ViewFunctionsOf = (db: string) => ViewFunctions;

export interface ViewFunctions {
  /** Calls the map function at `path` of `ddoc` once per document: its `[key, value]` pairs. */
  map(ddoc: JsonObject, path: readonly string[], docs: readonly JsonObject[]): Promise<FunctionOutcome[]>;
  /**
   * Calls the function at `path` once per argument list (reduce: `[keys, values, rereduce]`); once
   * `signal` aborts (the client left) a call not yet running is dropped and rejects (499).
   */
  call(ddoc: JsonObject, path: readonly string[], argLists: readonly Json[][], signal?: AbortSignal): Promise<FunctionOutcome[]>;
}
