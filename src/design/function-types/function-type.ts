import type { CouchError } from '../../errors/couch-error.js';
import type { JsonObject } from '../../json/json.js';
import type { FunctionPath, Outcome } from '../../js/sandbox.js';

/** A call of a design function that did not return. */
export type FailedCall = Extract<Outcome, { ok: false }>;

/** A function of a design document and how CouchDB names it in a compilation error. */
export interface NamedFunction {
  readonly path: FunctionPath;
  /** CouchDB's start of the error reason, the compiler's message follows. */
  readonly prefix: string;
}

/**
 * One kind of design-document function (CouchDB's query-server commands): where it lives in the
 * design document, what is compiled when the document is saved, and how a failed call becomes
 * CouchDB's error. The registry (`registry.ts`) lists every type; the design check on save reads it.
 */
export interface DesignFunctionType {
  /** The member of the design document that holds this type's functions, e.g. `filters`. */
  readonly member: string;
  /** This type's JavaScript functions in `ddoc`, each compiled before the document is saved. */
  functionsIn(ddoc: JsonObject): NamedFunction[];
  /**
   * CouchDB's error for a call that failed and fails the request; absent where a failing call
   * fails nothing (a map function that throws emits nothing: src/views).
   */
  readonly errorOf?: (failure: FailedCall) => CouchError;
}

export const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The string members of `ddoc[member]`, e.g. every filter: `[name, source]`. */
export function namedSources(ddoc: JsonObject, member: string): [string, string][] {
  const functions = ddoc[member];
  if (!isObject(functions)) return [];
  return Object.entries(functions).flatMap(([name, source]) => (typeof source === 'string' ? [[name, source] as [string, string]] : []));
}
