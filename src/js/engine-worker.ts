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
import { BEAT_MS, DesignContext } from './design-context.js';
import type { Limits, Reply, Request } from './protocol.js';

const port = parentPort!;
/** WebAssembly as far as used here (Node's global; the project's TypeScript libraries do not declare it). */
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object; Memory: new (size: { initial: number; maximum: number }) => object };

const base = (await import('@jitl/quickjs-wasmfile-release-sync')).default as unknown as QuickJSSyncVariant;
const wasm = new WebAssembly.Module(readFileSync(createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm')));
/** The emscripten build's own start-up memory (its `INITIAL_MEMORY`), under every limit. */
const BASE_BYTES = 16 * 1024 * 1024;
const PAGE = 65536;
const MAX_PAGES = 32768;

/**
 * A QuickJS instance of its own for one design document, in a WebAssembly memory that cannot grow
 * past the limit: this build cannot count its allocations (no `malloc_usable_size`), so the memory
 * itself is the limit, and a huge allocation fails with QuickJS's own "out of memory".
 */
function instance(memoryBytes: number): Promise<QuickJSWASMModule> {
  const maximum = Math.min(MAX_PAGES, Math.ceil((BASE_BYTES + memoryBytes) / PAGE));
  const wasmMemory = new WebAssembly.Memory({ initial: BASE_BYTES / PAGE, maximum });
  return newQuickJSWASMModuleFromVariant(newVariant(base, { wasmModule: wasm as never, wasmMemory: wasmMemory as never }));
}
const maxContexts = (workerData as { maxContexts: number }).maxContexts;
/** Design-document revisions by key, least recently used first. */
const contexts = new Map<string, DesignContext>();

const reply = (message: Reply): void => port.postMessage(message);

function drop(key: string): void {
  contexts.get(key)?.dispose();
  contexts.delete(key);
}

/** The context of `key`, loaded from `ddoc` when not here (or broken); undefined when `ddoc` is needed. */
async function contextOf(key: string, ddoc: string | undefined, limits: Limits): Promise<DesignContext | undefined> {
  const found = contexts.get(key);
  if (found && !found.broken) {
    contexts.delete(key);
    contexts.set(key, found);
    return found;
  }
  const source = ddoc ?? found?.ddoc;
  if (found) drop(key);
  if (source === undefined) return undefined;
  while (contexts.size >= maxContexts) drop(contexts.keys().next().value!);
  const created = new DesignContext(await instance(limits.memoryBytes), source, limits);
  contexts.set(key, created);
  return created;
}

async function callBatch(request: Extract<Request, { type: 'call' }>): Promise<void> {
  let context = await contextOf(request.key, request.ddoc, request.limits);
  if (!context) return reply({ id: request.id, type: 'missing' });
  const path = JSON.stringify(request.path);
  const count = request.count;
  context.load(request, path);
  const results: string[] = [];
  let beat = Date.now();
  for (let index = 0; index < count; index++) {
    if (context.broken) {
      context = (await contextOf(request.key, undefined, request.limits))!;
      context.load(request, path);
    }
    results.push(context.runOne(index, request.limits));
    if (Date.now() - beat > BEAT_MS) {
      beat = Date.now();
      reply({ id: request.id, type: 'beat' });
    }
  }
  reply({ id: request.id, type: 'results', results: `[${results.join(',')}]` });
}

async function check(request: Extract<Request, { type: 'check' }>): Promise<void> {
  const context = await contextOf(request.key, request.ddoc, request.limits);
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

/** Requests are handled one after the other, in the order they came. */
let queue = Promise.resolve();
port.on('message', (request: Request) => {
  queue = queue.then(() => handle(request));
});
