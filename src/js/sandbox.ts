/**
 * The JavaScript sandbox of design documents (docs/design-documents.md): CouchDB's query server,
 * run in-process but isolated.
 *
 * Engine: QuickJS compiled to WebAssembly (quickjs-emscripten-core + the release-sync wasm build),
 * the engine CouchDB 3.4+ runs by default. Chosen by measurement over isolated-vm (V8 isolates):
 * QuickJS takes ~8-10 µs per validate_doc_update call against ~4 µs for V8, which is far below the
 * cost of storing a document, while it needs no native build, no `--no-node-snapshot` flag, and its
 * whole heap lives in a WebAssembly memory the functions cannot leave. Each worker thread
 * (`[divan] js_workers`) holds one QuickJS module; each design-document revision gets its own
 * runtime there (its own memory limit, `[quickjs] memory_limit_bytes`), least recently used ones
 * dropped past `[divan] js_design_docs_per_worker`. Every call has its own time limit
 * (`[couchdb] os_process_timeout`); a call past it or past the memory limit fails alone, its
 * context is rebuilt, and since all of it runs off the main thread the server keeps answering.
 *
 * API (for validation, filters, views):
 * - `sandbox.call(ddoc, path, argLists)`: calls the function at `path` of `ddoc` (e.g.
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
 * Large batches are cut into chunks that run on every worker at once. Inside, functions see `log`
 * (lines also go to the server log), `isArray`, `toJSON`, `sum`, `emit`, `require` (CommonJS
 * modules stored in the design document, paths as CouchDB resolves them) and frozen intrinsics.
 */
import { createHash } from 'node:crypto';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { FailureKind, Limits, Outcome } from './protocol.js';
import { WorkerPool } from './worker-pool.js';

export type { FailureKind, Outcome } from './protocol.js';

/** A design document as stored: its functions, modules and other fields. */
export interface DesignDoc extends JsonObject {
  readonly _id: string;
  readonly _rev: string;
}

export type FunctionPath = readonly string[];

export interface SandboxSettings {
  readonly workers: () => number;
  readonly designDocsPerWorker: () => number;
  readonly limits: () => Limits;
  readonly log?: Logger;
}

/** Argument lists per message to a worker: small enough to spread a batch over every worker. */
const CHUNK = 1000;

type Triple = [boolean, Json, string[]];

function outcomeOf([ok, value, logs]: Triple): Outcome {
  if (ok) return { ok, value, logs };
  const failure = value !== null && typeof value === 'object' && !Array.isArray(value) ? value['divan_failure'] : undefined;
  if (typeof failure === 'string') return { ok, kind: failure as FailureKind, error: value, logs };
  const compile = Array.isArray(value) && value[1] === 'compilation_error';
  return { ok, kind: compile ? 'compile' : 'thrown', error: compile ? value[2]! : value, logs };
}

export class JsSandbox {
  readonly #pool: WorkerPool;
  readonly #settings: SandboxSettings;
  readonly #texts = new WeakMap<DesignDoc, { key: string; text: string }>();

  constructor(settings: SandboxSettings) {
    this.#settings = settings;
    this.#pool = new WorkerPool({
      size: settings.workers,
      maxContexts: settings.designDocsPerWorker,
      onReplace: (reason) => settings.log?.warning(`JavaScript sandbox: ${reason} A new worker replaces it.`),
    });
  }

  call(ddoc: DesignDoc, path: FunctionPath, argLists: readonly (readonly Json[])[], shared: readonly Json[] = []): Promise<Outcome[]> {
    return this.#batch(ddoc, path, 'call', argLists, JSON.stringify(shared));
  }

  map(ddoc: DesignDoc, path: FunctionPath, docs: readonly Json[]): Promise<Outcome[]> {
    return this.#batch(ddoc, path, 'map', docs.map((doc) => [doc]), '[]');
  }

  async check(ddoc: DesignDoc, paths: readonly FunctionPath[]): Promise<(string | undefined)[]> {
    if (paths.length === 0) return [];
    const { key, text } = this.#text(ddoc);
    const limits = this.#settings.limits();
    const answer = await this.#pool.run({
      key,
      timeoutMs: Math.max(5000, limits.timeoutMs) * (paths.length + 1),
      make: (id, withDdoc) => ({ id, type: 'check', key, ...(withDdoc ? { ddoc: text } : {}), paths, limits }),
      failed: (reason) => ({ id: 0, type: 'errors', errors: paths.map(() => reason) }),
    });
    return answer.type === 'errors' ? answer.errors.map((error) => error ?? undefined) : paths.map(() => 'unexpected answer');
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  #text(ddoc: DesignDoc): { key: string; text: string } {
    let known = this.#texts.get(ddoc);
    if (!known) {
      const text = JSON.stringify(ddoc);
      const digest = createHash('sha256').update(text).digest('base64url').slice(0, 22);
      known = { key: `${ddoc._id}@${ddoc._rev}#${digest}`, text };
      this.#texts.set(ddoc, known);
    }
    return known;
  }

  async #batch(ddoc: DesignDoc, path: FunctionPath, mode: 'call' | 'map', argLists: readonly (readonly Json[])[], shared: string): Promise<Outcome[]> {
    const chunks: (readonly (readonly Json[])[])[] = [];
    for (let start = 0; start < argLists.length; start += CHUNK) chunks.push(argLists.slice(start, start + CHUNK));
    const done = await Promise.all(chunks.map((chunk) => this.#chunk(ddoc, path, mode, chunk, shared)));
    const outcomes = done.flat();
    const log = this.#settings.log;
    if (log) for (const outcome of outcomes) for (const line of outcome.logs) log.info(`${ddoc._id}: log: ${line}`);
    return outcomes;
  }

  async #chunk(ddoc: DesignDoc, path: FunctionPath, mode: 'call' | 'map', chunk: readonly (readonly Json[])[], shared: string): Promise<Outcome[]> {
    const { key, text } = this.#text(ddoc);
    const limits = this.#settings.limits();
    const args = JSON.stringify(chunk);
    const answer = await this.#pool.run({
      key,
      // Loading the design document may come first (up to 5 s, design-context.ts).
      timeoutMs: Math.max(5000, limits.timeoutMs),
      make: (id, withDdoc) => ({ id, type: 'call', key, ...(withDdoc ? { ddoc: text } : {}), path, mode, args, shared, count: chunk.length, limits }),
      failed: (message) => ({ id: 0, type: 'results', results: JSON.stringify(chunk.map(() => [false, { divan_failure: 'crash', message }, []])) }),
    });
    if (answer.type !== 'results') throw new Error('The JavaScript worker answered a call with compile errors.');
    return (JSON.parse(answer.results) as Triple[]).map(outcomeOf);
  }
}
