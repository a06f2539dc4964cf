/**
 * What the main thread and a sandbox worker (engine-worker.ts) say to each other, and the outcome
 * of one function call as the sandbox's callers see it. A leaf module: both sides import it.
 */
import type { MessagePort } from 'node:worker_threads';
import type { Json } from '../json/json.js';

/** How one call of a design-document function ended. */
export type Outcome =
  | { readonly ok: true; readonly value: Json; readonly logs: readonly string[] }
  | { readonly ok: false; readonly kind: FailureKind; readonly error: Json; readonly logs: readonly string[] };

/**
 * Why a call failed: `thrown` (the function threw a value, e.g. `{forbidden: ...}`; an `Error` object
 * arrives as `{error: name, message}`; a map function past its emit bounds throws `emit_limit`),
 * `compile` (the function or a module it requires does not compile; `error` is CouchDB's message),
 * `timeout` (the request's calls ran past `os_process_timeout` together), `memory` (past
 * `[quickjs] memory_limit_bytes`), `crash` (the worker died and was replaced). `deferred` never
 * reaches a caller: a call of a resumable request (map, filter) the worker did not reach within the
 * request's time or result bounds, which the sandbox sends again as a request of its own.
 */
export type FailureKind = 'thrown' | 'compile' | 'timeout' | 'memory' | 'crash' | 'deferred';

/**
 * `call` returns the function's value; `map` calls it with one document and returns its `[key, value]`
 * emits; `list` runs a list function (CouchDB's render.js runList), which trades messages with the
 * main thread while it runs (`exchange` replies, answered on the worker's exchange channel).
 * `index` calls a Nouveau index function with one document and returns its `index(…)` fields.
 */
export type CallMode = 'call' | 'map' | 'list' | 'index';

export interface Limits {
  /** Time every call of one request may take together (`os_process_timeout`). */
  readonly timeoutMs: number;
  /** Memory of one context (`[quickjs] memory_limit_bytes`). */
  readonly memoryBytes: number;
  /** What one document's map call may emit: rows, and characters of their JSON. */
  readonly maxEmits: number;
  readonly maxEmitBytes: number;
}

/** How much a worker may keep loaded: its share of `[quickjs] max_total_memory_bytes`, and how long an idle context stays. */
export interface Retention {
  readonly maxContexts: number;
  readonly maxBytes: number;
  readonly idleMs: number;
}

/** What a worker holds: its contexts' WebAssembly memory, how many, and how many it evicted so far. */
export interface HeldMemory {
  readonly bytes: number;
  readonly contexts: number;
  readonly evictions: number;
}

/** The pool's work: workers running a job, jobs waiting, jobs answered so far and jobs dropped unrun because their request was cancelled. */
export interface PoolLoad {
  readonly busy: number;
  readonly queued: number;
  readonly jobs: number;
  readonly cancelled: number;
}

/**
 * Main thread → worker. `ddoc` (JSON text) is sent when the worker may not hold that revision yet;
 * `resumable` says the calls not reached within the budget may be deferred rather than timed out;
 * `args` is the JSON text of the argument lists, `shared` that of the arguments every list ends with.
 */
export type Request =
  | { readonly id: number; readonly type: 'call'; readonly key: string; readonly ddoc?: string; readonly path: readonly string[]; readonly mode: CallMode; readonly resumable: boolean; readonly args: string; readonly shared: string; readonly count: number; readonly limits: Limits; readonly retention: Retention }
  | { readonly id: number; readonly type: 'check'; readonly key: string; readonly ddoc?: string; readonly paths: readonly (readonly string[])[]; readonly limits: Limits; readonly retention: Retention };

/**
 * Worker → main thread: `results` is the JSON text of an array of `[ok, value, logs]` triples (one per
 * argument list; failure kinds other than `thrown` are `[false, {kind, message}, logs]` with
 * `value.divan_failure` set), `errors` one compile message or null per checked path, `missing` asks
 * for the design document again (the worker dropped it), `beat` says a long batch still progresses,
 * `held` (id 0, also after idle evictions) what the worker holds now; `exchange` is a message of a
 * running call (a list function's output so far), which waits, blocked, for the `ExchangeAnswer` of
 * the same `seq` on the worker's exchange channel.
 */
export type Reply =
  | { readonly id: number; readonly type: 'results'; readonly results: string }
  | { readonly id: number; readonly type: 'errors'; readonly errors: readonly (string | null)[] }
  | { readonly id: number; readonly type: 'missing' }
  | { readonly id: number; readonly type: 'beat' }
  | { readonly id: number; readonly type: 'exchange'; readonly seq: number; readonly text: string }
  | { readonly id: 0; readonly type: 'held'; readonly held: HeldMemory };

/** Main thread → a worker blocked in an exchange, on its exchange channel (not its port: its event loop is not running). */
export interface ExchangeAnswer {
  readonly seq: number;
  readonly text: string;
}

/** What each worker is started with: the channel exchange answers arrive on, and the word it waits on (`Atomics.wait`). */
export interface WorkerStart {
  readonly exchangePort: MessagePort;
  readonly exchangeFlag: SharedArrayBuffer;
}
