/**
 * A sandbox worker thread: one QuickJS WebAssembly module, and the design documents recently
 * called here, each in its own runtime (design-context.ts). It answers the main thread's requests
 * (protocol.ts) one at a time; a long batch sends beats so the main thread's watchdog knows it
 * progresses. Nothing here is reachable from the functions it runs: they see only the prelude.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSSyncVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import { ContextCache } from './context-cache.js';
import { BEAT_MS, DesignContext, failure } from './design-context.js';
import { ExchangeWait } from './exchange-wait.js';
import type { Limits, Reply, Request, Retention, WorkerStart } from './protocol.js';

const port = parentPort!;
/** WebAssembly as far as used here (Node's global; the project's TypeScript libraries do not declare it). */
interface WasmMemory { readonly buffer: ArrayBuffer }
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object; Memory: new (size: { initial: number; maximum: number }) => WasmMemory };

const base = (await import('@jitl/quickjs-wasmfile-release-sync')).default as unknown as QuickJSSyncVariant;
const wasm = new WebAssembly.Module(readFileSync(createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm')));
/** The emscripten build's own start-up memory (its `INITIAL_MEMORY`), under every limit. */
const BASE_BYTES = 16 * 1024 * 1024;
const PAGE = 65536;
const MAX_PAGES = 32768;
/** Characters of results after which a resumable batch defers its remaining documents (the main thread parses them at once). */
const MAX_RESULT_CHARS = 64 * 1024 * 1024;
/** How often (ms) at most a worker looks for idle contexts between requests. */
const IDLE_CHECK_MS = 10_000;

/**
 * A QuickJS instance of its own for one design document, in a WebAssembly memory that cannot grow
 * past the limit: this build cannot count its allocations (no `malloc_usable_size`), so the memory
 * itself is the limit, and a huge allocation fails with QuickJS's own "out of memory".
 */
async function instance(memoryBytes: number): Promise<{ module: QuickJSWASMModule; memory: WasmMemory }> {
  const maximum = Math.min(MAX_PAGES, Math.ceil((BASE_BYTES + memoryBytes) / PAGE));
  const memory = new WebAssembly.Memory({ initial: BASE_BYTES / PAGE, maximum });
  return { module: await newQuickJSWASMModuleFromVariant(newVariant(base, { wasmModule: wasm as never, wasmMemory: memory as never })), memory };
}
/** Design-document contexts by key (database, design document, revision, digest). */
const contexts = new ContextCache();
/** The latest retention the main thread sent: idle contexts are dropped by it between requests too. */
let retention: Retention | undefined;

const reply = (message: Reply): void => port.postMessage(message);
const exchanges = new ExchangeWait(workerData as WorkerStart);

/** The context of `key`, loaded from `ddoc` when not here (or broken); undefined when `ddoc` is needed. */
async function contextOf(key: string, ddoc: string | undefined, limits: Limits, kept: Retention): Promise<DesignContext | undefined> {
  const found = contexts.take(key);
  if (found && !found.broken) return found;
  const source = ddoc ?? found?.ddoc;
  if (found) contexts.drop(key);
  if (source === undefined) return undefined;
  contexts.reserve(kept, BASE_BYTES);
  const { module, memory } = await instance(limits.memoryBytes);
  const created = new DesignContext(module, source, limits);
  contexts.add(key, created, memory);
  return created;
}

const notReached = (resumable: boolean, budgetMs: number): string =>
  resumable
    ? failure('deferred', 'Not reached within this request\'s budget.')
    : failure('timeout', `The request's calls ran longer than ${budgetMs} ms together (os_process_timeout).`);

/**
 * Runs a batch within one budget of `os_process_timeout` for all its calls. A call interrupted by
 * the budget that is not the batch's first, and the calls not reached, fail as `timeout`, or in a
 * resumable batch as `deferred` (the sandbox sends them again in a request of their own, behind
 * other databases' requests); the first call alone past the budget is that function's own
 * `timeout`. A resumable batch also stops once its results pass MAX_RESULT_CHARS, the rest deferred.
 */
async function callBatch(request: Extract<Request, { type: 'call' }>): Promise<void> {
  const { limits, resumable } = request;
  let context = await contextOf(request.key, request.ddoc, limits, request.retention);
  if (!context) return reply({ id: request.id, type: 'missing' });
  const path = JSON.stringify(request.path);
  const results: string[] = [];
  let loaded = context.load(request, path);
  let deadline = Date.now() + limits.timeoutMs;
  let chars = 0;
  let beat = Date.now();
  // Map and index documents run many to a call into the context (prelude-batch.ts); other calls one by one.
  const many = resumable && (request.mode === 'map' || request.mode === 'index');
  for (let index = 0; index < request.count;) {
    if (context.broken || !loaded) {
      // Rebuilding is set-up, not the functions' time: the budget waits meanwhile.
      const started = Date.now();
      context = (await contextOf(request.key, undefined, limits, request.retention))!;
      loaded = context.load(request, path);
      if (!loaded) throw new Error('The design document\'s globals could not be reset.');
      deadline += Date.now() - started;
    }
    // The first call always runs, so that a deferred map document makes progress when sent again.
    const full = index > 0 && (Date.now() >= deadline || (resumable && chars > MAX_RESULT_CHARS));
    let answers: (string | undefined)[];
    if (full) answers = [undefined];
    else if (many) answers = context.runMany(index, request.count - index, limits, deadline, beat + BEAT_MS, MAX_RESULT_CHARS - chars);
    else {
      context.exchange = request.mode === 'list' ? (text) => exchanges.exchange(text, (seq, sent) => reply({ id: request.id, type: 'exchange', seq, text: sent })) : undefined;
      answers = [context.runOne(index, limits, deadline)];
      context.exchange = undefined;
    }
    for (const result of answers) {
      if (result === undefined && index === 0) results.push(failure('timeout', `The function ran longer than ${limits.timeoutMs} ms (os_process_timeout).`));
      else results.push(result ?? notReached(resumable, limits.timeoutMs));
      chars += result?.length ?? 0;
      index++;
    }
    if (Date.now() - beat > BEAT_MS) {
      beat = Date.now();
      reply({ id: request.id, type: 'beat' });
    }
  }
  reply({ id: request.id, type: 'results', results: `[${results.join(',')}]` });
}

async function check(request: Extract<Request, { type: 'check' }>): Promise<void> {
  const context = await contextOf(request.key, request.ddoc, request.limits, request.retention);
  if (!context) return reply({ id: request.id, type: 'missing' });
  reply({ id: request.id, type: 'errors', errors: context.check(request.paths, request.limits) });
}

async function handle(request: Request): Promise<void> {
  try {
    if (request.type === 'call') await callBatch(request);
    else await check(request);
  } catch (error) {
    // The design document itself could not be loaded (its JSON, or limits too small for it).
    const message = JSON.stringify([false, { divan_failure: 'crash', message: (error as Error).message }, []]);
    if (request.type === 'call') reply({ id: request.id, type: 'results', results: `[${Array.from({ length: request.count }, () => message).join(',')}]` });
    else reply({ id: request.id, type: 'errors', errors: request.paths.map(() => (error as Error).message) });
  }
}

/** Sends what this worker holds after dropping what the retention asks to drop. */
function trimAndTell(): void {
  if (retention) contexts.trim(retention);
  reply({ id: 0, type: 'held', held: contexts.held() });
}

/** Requests are handled one after the other, in the order they came. */
let queue = Promise.resolve();
port.on('message', (request: Request) => {
  retention = request.retention;
  queue = queue.then(() => handle(request)).then(trimAndTell);
});
/** Idle contexts go even when no request comes: looked for every half idle time (within bounds). */
function checkIdle(): void {
  queue = queue.then(() => {
    if (retention && contexts.trim(retention)) reply({ id: 0, type: 'held', held: contexts.held() });
  });
  const every = retention ? Math.min(IDLE_CHECK_MS, Math.max(100, retention.idleMs / 2)) : IDLE_CHECK_MS;
  setTimeout(checkIdle, every).unref();
}
checkIdle();
