/**
 * The JavaScript sandbox of design documents (docs/design-documents.md): CouchDB's query server,
 * run in-process but isolated.
 *
 * Engine: QuickJS compiled to WebAssembly (quickjs-emscripten-core + the release-sync wasm build),
 * the engine CouchDB 3.4+ runs by default. Chosen by measurement over isolated-vm (V8 isolates):
 * QuickJS takes ~8-10 µs per validate_doc_update call against ~4 µs for V8, which is far below the
 * cost of storing a document, while it needs no native build, no `--no-node-snapshot` flag, and its
 * whole heap lives in a WebAssembly memory the functions cannot leave. Each worker thread
 * (`[divan] js_workers`) holds one QuickJS module; each database's design-document revision gets its
 * own runtime there (its own memory limit, `[quickjs] memory_limit_bytes`): two databases holding
 * the same design document share nothing. A worker drops the least recently used ones past
 * `[divan] js_design_docs_per_worker` or its share of `[quickjs] max_total_memory_bytes`, and any
 * idle for `[quickjs] idle_context_ms` (context-cache.ts). The calls of one request share one time
 * budget (`[couchdb] os_process_timeout`); a call past it or past the memory limit fails, its
 * context is rebuilt, and since all of it runs off the main thread the server keeps answering.
 * Requests wait in a queue per database; the database served least recently goes first (worker-pool.ts).
 *
 * API (for validation, filters, views; `db` is the database the design document belongs to):
 * - `sandbox.call(db, ddoc, path, argLists)`: calls the function at `path` of `ddoc` (e.g.
 *   `['validate_doc_update']`, `['filters', 'mine']`, `['views', 'by_type', 'reduce']`) once per
 *   argument list, with the design document as `this` (as CouchDB). One outcome per argument list,
 *   in order: `{ok: true, value, logs}` or `{ok: false, kind, error, logs}` (protocol.ts: `kind`
 *   `thrown` carries the thrown value, e.g. `{forbidden: 'm'}`; `compile` carries CouchDB's
 *   compilation_error text). Reduce: argument list `[keys, values, rereduce]`. Optional `shared`
 *   arguments end every list: sent and parsed once per batch, and frozen there, as the design
 *   document is, so that no call can change what the next one sees (validation's userCtx, secObj).
 * - `sandbox.map(ddoc, path, docs)`: calls a map function once per document; the value of each
 *   outcome is the list of its `emit(key, value)` pairs as `[key, value]` (undefined → null). A
 *   document whose map function throws gets its own failed outcome; the others are unaffected.
 * - `sandbox.check(ddoc, paths)`: compiles those functions; a CouchDB compilation message per path
 *   that does not compile, undefined for the others (refusing a design document on save).
 * Design documents are identified by `_id`, `_rev` and a digest of their content, so a changed
 * revision is loaded anew and compiled functions and required modules are cached per revision.
 * - `sandbox.filter(db, ddoc, path, argLists)`: `call` for filter functions, resumable as `map`.
 * - `sandbox.list(db, ddoc, path, args, exchange)`: a list function, which asks for its rows
 *   while it runs (exchange-wait.ts): the rows reach it a batch at a time, its output leaves the same way.
 * Map and filter batches are cut into chunks, one after the other. Inside, functions see `log`
 * (lines also go to the server log), `isArray`, `toJSON`, `sum`, `emit`, `require` (CommonJS
 * modules stored in the design document, paths as CouchDB resolves them) and frozen intrinsics.
 */
import { createHash } from 'node:crypto';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import { clientGone } from '../turns/loop-turns.js';
import type { CallMode, FailureKind, HeldMemory, Limits, Outcome, PoolLoad, Retention } from './protocol.js';
import { JobCancelled, WorkerPool } from './worker-pool.js';
import { indexNativeFirst, nativeIndexFunction } from './native-index.js';

export type { Outcome } from './protocol.js';

/** A design document as stored: its functions, modules and other fields. */
export interface DesignDoc extends JsonObject {
  readonly _id: string;
  readonly _rev: string;
}

export type FunctionPath = readonly string[];

export interface SandboxSettings {
  readonly workers: () => number;
  /** What each worker may keep loaded. */
  readonly retention: () => Retention;
  readonly limits: () => Limits;
  /** Whether index functions of the native subset run on the host (native-index.ts); true when absent. */
  readonly native?: () => boolean;
  readonly log?: Logger;
}

/** Argument lists per resumable request to a worker. */
const CHUNK = 1000;
/** The scope of design documents checked before they are saved (no database name is empty). */
const CHECKS = '';

type Triple = [boolean, Json, string[]];

function outcomeOf([ok, value, logs]: Triple): Outcome {
  if (ok) return { ok, value, logs };
  const failure = value !== null && typeof value === 'object' && !Array.isArray(value) ? value['divan_failure'] : undefined;
  if (typeof failure === 'string') return { ok, kind: failure as FailureKind, error: value, logs };
  const compile = Array.isArray(value) && value[1] === 'compilation_error';
  return { ok, kind: compile ? 'compile' : 'thrown', error: compile ? value[2]! : value, logs };
}

const textOf = (argList: readonly Json[]): string => JSON.stringify(argList);

export class JsSandbox {
  readonly #pool: WorkerPool;
  readonly #settings: SandboxSettings;
  readonly #texts = new WeakMap<DesignDoc, { key: string; text: string }>();

  constructor(settings: SandboxSettings) {
    this.#settings = settings;
    this.#pool = new WorkerPool({
      size: settings.workers,
      onReplace: (reason) => settings.log?.warning(`JavaScript sandbox: ${reason} A new worker replaces it.`),
    });
  }

  /** With `signal`, a call still waiting for a worker when it aborts is dropped: it rejects with 499 `client_closed_request`. */
  async call(db: string, ddoc: DesignDoc, path: FunctionPath, argLists: readonly (readonly Json[])[], shared: readonly Json[] = [], signal?: AbortSignal): Promise<Outcome[]> {
    if (argLists.length === 0) return [];
    return this.#logged(ddoc, this.#job(db, ddoc, path, 'call', false, argLists.map(textOf), JSON.stringify(shared), undefined, signal));
  }

  /**
   * A list function (`['lists', name]`) called with `args` (`[head, req]`): while it runs, each of
   * its messages (the JSON text of `[label, chunks, start]`, render.js's) goes to `exchange`, whose
   * answer (JSON text: the next rows, `[]` at the end, `"abort"` to stop it) the function reads.
   * The outcome's value is its last message, `["end", chunks, start]`.
   */
  async list(db: string, ddoc: DesignDoc, path: FunctionPath, args: readonly Json[], exchange: (text: string) => Promise<string>): Promise<Outcome> {
    const [outcome] = await this.#logged(ddoc, this.#job(db, ddoc, path, 'list', false, [textOf(args)], '[]', exchange));
    return outcome!;
  }

  map(db: string, ddoc: DesignDoc, path: FunctionPath, docs: readonly Json[]): Promise<Outcome[]> {
    return this.#logged(ddoc, this.#resumable(db, ddoc, path, 'map', docs.map((doc) => `[${JSON.stringify(doc)}]`)));
  }

  /**
   * A Nouveau index function over documents given as JSON text (as stored: the host neither parses
   * nor serializes them): each outcome's value lists its `index(…)` fields (prelude-index.ts).
   */
  index(db: string, ddoc: DesignDoc, path: FunctionPath, docTexts: readonly string[]): Promise<Outcome[]> {
    const inSandbox = (texts: readonly string[]): Promise<Outcome[]> => this.#logged(ddoc, this.#resumable(db, ddoc, path, 'index', texts.map((text) => `[${text}]`)));
    const native = this.#settings.native?.() === false ? undefined : nativeIndexFunction(ddoc, path);
    return native === undefined ? inSandbox(docTexts) : indexNativeFirst(native, docTexts, this.#settings.limits(), inSandbox);
  }

  /** A filter function over documents: as `call`, but calls past the budget are sent again (as `map`). */
  filter(db: string, ddoc: DesignDoc, path: FunctionPath, argLists: readonly (readonly Json[])[]): Promise<Outcome[]> {
    return this.#logged(ddoc, this.#resumable(db, ddoc, path, 'call', argLists.map(textOf)));
  }

  async check(ddoc: DesignDoc, paths: readonly FunctionPath[]): Promise<(string | undefined)[]> {
    if (paths.length === 0) return [];
    const { key, text } = this.#text(CHECKS, ddoc);
    const limits = this.#settings.limits();
    const retention = this.#settings.retention();
    const answer = await this.#pool.run({
      scope: CHECKS,
      key,
      timeoutMs: Math.max(5000, limits.timeoutMs) * (paths.length + 1),
      make: (id, withDdoc) => ({ id, type: 'check', key, ...(withDdoc ? { ddoc: text } : {}), paths, limits, retention }),
      failed: (reason) => ({ id: 0, type: 'errors', errors: paths.map(() => reason) }),
    });
    return answer.type === 'errors' ? answer.errors.map((error) => error ?? undefined) : paths.map(() => 'unexpected answer');
  }

  /** The WebAssembly memory the workers' contexts hold, how many contexts, evictions so far, and the workers' load. */
  held(): HeldMemory & PoolLoad {
    return { ...this.#pool.held(), ...this.#pool.load() };
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  /** The worker-side key of `ddoc` in `db`: database, id, revision and a digest of the content. */
  #text(db: string, ddoc: DesignDoc): { key: string; text: string } {
    let known = this.#texts.get(ddoc);
    if (!known) {
      const text = JSON.stringify(ddoc);
      const digest = createHash('sha256').update(text).digest('base64url').slice(0, 22);
      known = { key: `${ddoc._id}@${ddoc._rev}#${digest}`, text };
      this.#texts.set(ddoc, known);
    }
    return { key: `${JSON.stringify(db)}/${known.key}`, text: known.text };
  }

  async #logged(ddoc: DesignDoc, answer: Promise<Outcome[]>): Promise<Outcome[]> {
    const outcomes = await answer;
    const log = this.#settings.log;
    if (log) for (const outcome of outcomes) for (const line of outcome.logs) log.info(`${ddoc._id}: log: ${line}`);
    return outcomes;
  }

  /** Chunks of argument lists (JSON texts) one after the other; the ones a chunk's budget did not reach go again. */
  async #resumable(db: string, ddoc: DesignDoc, path: FunctionPath, mode: CallMode, argLists: readonly string[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = new Array<Outcome>(argLists.length);
    let pending = argLists.map((_, index) => index);
    while (pending.length > 0) {
      const chunk = pending.slice(0, CHUNK);
      const answered = await this.#job(db, ddoc, path, mode, true, chunk.map((index) => argLists[index]!), '[]');
      const deferred = chunk.filter((index, at) => {
        const outcome = answered[at]!;
        if (!outcome.ok && outcome.kind === 'deferred') return true;
        outcomes[index] = outcome;
        return false;
      });
      pending = deferred.concat(pending.slice(CHUNK));
    }
    return outcomes;
  }

  async #job(db: string, ddoc: DesignDoc, path: FunctionPath, mode: CallMode, resumable: boolean, argLists: readonly string[], shared: string, exchange?: (text: string) => Promise<string>, signal?: AbortSignal): Promise<Outcome[]> {
    const { key, text } = this.#text(db, ddoc);
    const limits = this.#settings.limits();
    const retention = this.#settings.retention();
    const args = `[${argLists.join(',')}]`;
    const count = argLists.length;
    const answer = await this.#pool.run({
      scope: db,
      ...(signal === undefined ? {} : { signal }),
      key,
      // Loading the design document may come first (up to 5 s, design-context.ts).
      timeoutMs: Math.max(5000, limits.timeoutMs),
      make: (id, withDdoc) => ({ id, type: 'call', key, ...(withDdoc ? { ddoc: text } : {}), path, mode, resumable, args, shared, count, limits, retention }),
      failed: (message) => ({ id: 0, type: 'results', results: JSON.stringify(argLists.map(() => [false, { divan_failure: 'crash', message }, []])) }),
      ...(exchange === undefined ? {} : { exchange }),
    }).catch((error: unknown) => {
      throw error instanceof JobCancelled ? clientGone() : error;
    });
    if (answer.type !== 'results') throw new Error('The JavaScript worker answered a call with compile errors.');
    return (JSON.parse(answer.results) as Triple[]).map(outcomeOf);
  }
}
