/**
 * A sandbox worker thread: one QuickJS WebAssembly module, and the design documents recently
 * called here, each in its own runtime (design-context.ts). It answers the main thread's requests
 * (protocol.ts) one at a time; a long batch sends beats so the main thread's watchdog knows it
 * progresses. Nothing here is reachable from the functions it runs: they see only the prelude.
 */
import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import { parentPort, workerData } from 'node:worker_threads';
import { BEAT_MS, DesignContext } from './design-context.js';
import type { Limits, Reply, Request } from './protocol.js';

const port = parentPort!;
const module = await newQuickJSWASMModuleFromVariant(import('@jitl/quickjs-wasmfile-release-sync'));
const maxContexts = (workerData as { maxContexts: number }).maxContexts;
/** Design-document revisions by key, least recently used first. */
const contexts = new Map<string, DesignContext>();

const reply = (message: Reply): void => port.postMessage(message);

function drop(key: string): void {
  contexts.get(key)?.dispose();
  contexts.delete(key);
}

/** The context of `key`, loaded from `ddoc` when not here (or broken); undefined when `ddoc` is needed. */
function contextOf(key: string, ddoc: string | undefined, limits: Limits): DesignContext | undefined {
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
  const created = new DesignContext(module, source, limits);
  contexts.set(key, created);
  return created;
}

function callBatch(request: Extract<Request, { type: 'call' }>): void {
  let context = contextOf(request.key, request.ddoc, request.limits);
  if (!context) return reply({ id: request.id, type: 'missing' });
  const path = JSON.stringify(request.path);
  const count = request.count;
  context.load(request.args, request.limits);
  const results: string[] = [];
  let beat = Date.now();
  for (let index = 0; index < count; index++) {
    if (context.broken) {
      context = contextOf(request.key, undefined, request.limits)!;
      context.load(request.args, request.limits);
    }
    results.push(context.runOne(path, index, request.mode, request.limits));
    if (Date.now() - beat > BEAT_MS) {
      beat = Date.now();
      reply({ id: request.id, type: 'beat' });
    }
  }
  reply({ id: request.id, type: 'results', results: `[${results.join(',')}]` });
}

function check(request: Extract<Request, { type: 'check' }>): void {
  const context = contextOf(request.key, request.ddoc, request.limits);
  if (!context) return reply({ id: request.id, type: 'missing' });
  reply({ id: request.id, type: 'errors', errors: context.check(request.paths, request.limits) });
}

port.on('message', (request: Request) => {
  try {
    if (request.type === 'call') callBatch(request);
    else check(request);
  } catch (error) {
    // The design document itself could not be loaded (its JSON, or limits too small for it).
    const message = JSON.stringify([false, { divan_failure: 'crash', message: (error as Error).message }, []]);
    if (request.type === 'call') reply({ id: request.id, type: 'results', results: `[${Array.from({ length: request.count }, () => message).join(',')}]` });
    else reply({ id: request.id, type: 'errors', errors: request.paths.map(() => (error as Error).message) });
  }
});
