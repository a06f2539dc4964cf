/**
 * What the main thread and a sandbox worker (engine-worker.ts) say to each other, and the outcome
 * of one function call as the sandbox's callers see it. A leaf module: both sides import it.
 */
import type { Json } from '../json/json.js';

/** How one call of a design-document function ended. */
export type Outcome =
  | { readonly ok: true; readonly value: Json; readonly logs: readonly string[] }
  | { readonly ok: false; readonly kind: FailureKind; readonly error: Json; readonly logs: readonly string[] };

/**
 * Why a call failed: `thrown` (the function threw a value, e.g. `{forbidden: ...}`; an `Error` object
 * arrives as `{error: name, message}`), `compile` (the function or a module it requires does not
 * compile; `error` is CouchDB's message), `timeout` (ran past `os_process_timeout`), `memory` (past
 * `[quickjs] memory_limit_bytes`), `crash` (the worker died and was replaced).
 */
export type FailureKind = 'thrown' | 'compile' | 'timeout' | 'memory' | 'crash';

/** `call` returns the function's value; `map` calls it with one document and returns its `[key, value]` emits. */
export type CallMode = 'call' | 'map';

export interface Limits {
  readonly timeoutMs: number;
  readonly memoryBytes: number;
}

/**
 * Main thread → worker. `ddoc` (JSON text) is sent when the worker may not hold that revision yet;
 * `args` is the JSON text of the argument lists, `shared` that of the arguments every list ends with.
 */
export type Request =
  | { readonly id: number; readonly type: 'call'; readonly key: string; readonly ddoc?: string; readonly path: readonly string[]; readonly mode: CallMode; readonly args: string; readonly shared: string; readonly count: number; readonly limits: Limits }
  | { readonly id: number; readonly type: 'check'; readonly key: string; readonly ddoc?: string; readonly paths: readonly (readonly string[])[]; readonly limits: Limits };

/**
 * Worker → main thread: `results` is the JSON text of an array of `[ok, value, logs]` triples (one per
 * argument list; failure kinds other than `thrown` are `[false, {kind, message}, logs]` with
 * `value.divan_failure` set), `errors` one compile message or null per checked path, `missing` asks
 * for the design document again (the worker dropped it), `beat` says a long batch still progresses.
 */
export type Reply =
  | { readonly id: number; readonly type: 'results'; readonly results: string }
  | { readonly id: number; readonly type: 'errors'; readonly errors: readonly (string | null)[] }
  | { readonly id: number; readonly type: 'missing' }
  | { readonly id: number; readonly type: 'beat' };
