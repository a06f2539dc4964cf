import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten-core';
import { PRELUDE } from './prelude.js';
import type { CallMode, FailureKind, Limits } from './protocol.js';

/** Stack the functions of one design document may use (deep recursion fails that call only). */
const MAX_STACK_BYTES = 512 * 1024;
/**
 * Time (ms) loading a design document or compiling its functions may take at least, whatever
 * `os_process_timeout` says: set-up is ours, not the function's, and a loaded machine must not
 * make a valid design document fail to load.
 */
const SETUP_MS = 5000;
/** How often (ms) a long batch tells the main thread it is still alive. */
const BEAT_MS = 500;

export const failure = (kind: FailureKind, message: string): string => JSON.stringify([false, { divan_failure: kind, message }, []]);

/**
 * One design-document revision loaded into its own QuickJS runtime and context (worker side): its
 * own memory limit, its own module cache and compiled functions, nothing shared with another
 * design document. A call that runs past its time or memory makes the context unusable; the
 * caller (engine-worker.ts) then drops it and loads the design document again.
 */
export class DesignContext {
  readonly #runtime: QuickJSRuntime;
  readonly #context: QuickJSContext;
  readonly #run: QuickJSHandle;
  readonly #runMany: QuickJSHandle;
  readonly #taken: QuickJSHandle;
  readonly #batch: QuickJSHandle;
  readonly #check: QuickJSHandle;
  #deadline = Number.POSITIVE_INFINITY;
  /** Set after a timeout or an exhausted memory limit: drop this context, load a new one. */
  broken = false;
  /**
   * What a running call's messages go to (a list function's output, answered with its next rows),
   * set by the worker for the calls that exchange; the time spent waiting is not the function's.
   */
  exchange: ((text: string) => string) | undefined;

  constructor(module: QuickJSWASMModule, readonly ddoc: string, limits: Limits) {
    this.#runtime = module.newRuntime();
    this.#runtime.setMaxStackSize(MAX_STACK_BYTES);
    this.#runtime.setInterruptHandler(() => Date.now() > this.#deadline);
    this.#context = this.#runtime.newContext();
    try {
      this.#deadline = Date.now() + Math.max(SETUP_MS, limits.timeoutMs);
      this.#defineExchange();
      this.#context.unwrapResult(this.#context.evalCode(PRELUDE, 'prelude.js')).dispose();
      this.#call('__divan_load', ddoc);
      this.#run = this.#context.getProp(this.#context.global, '__divan_run');
      this.#runMany = this.#context.getProp(this.#context.global, '__divan_run_many');
      this.#taken = this.#context.getProp(this.#context.global, '__divan_taken');
      this.#batch = this.#context.getProp(this.#context.global, '__divan_batch');
      this.#check = this.#context.getProp(this.#context.global, '__divan_check');
    } catch (error) {
      this.#context.dispose();
      this.#runtime.dispose();
      throw error;
    } finally {
      this.#deadline = Number.POSITIVE_INFINITY;
    }
  }

  /** `__divan_exchange(text)`, which the prelude takes for itself (and removes from the global object) before any function runs. */
  #defineExchange(): void {
    const vm = this.#context;
    const host = vm.newFunction('__divan_exchange', (text) => {
      if (this.exchange === undefined) throw new Error('No exchange in this call.');
      const started = Date.now();
      try {
        return vm.newString(this.exchange(vm.getString(text)));
      } finally {
        this.#deadline += Date.now() - started;
      }
    });
    vm.setProp(vm.global, '__divan_exchange', host);
    host.dispose();
  }

  /** Calls a global function of the prelude with string arguments; returns its result as a JS value. */
  #call(name: string, ...args: (string | number)[]): unknown {
    const vm = this.#context;
    const fn = vm.getProp(vm.global, name);
    const handles = args.map((arg) => (typeof arg === 'string' ? vm.newString(arg) : vm.newNumber(arg)));
    try {
      const result = vm.unwrapResult(vm.callFunction(fn, vm.undefined, ...handles));
      const value: unknown = vm.dump(result);
      result.dispose();
      return value;
    } finally {
      for (const handle of handles) handle.dispose();
      fn.dispose();
    }
  }

  /**
   * Hands a batch's argument lists and shared arguments (JSON texts) and the function to call to the
   * context; false (and the context broken) when an earlier call left globals that cannot be removed.
   */
  load({ args, shared, mode, limits }: { args: string; shared: string; mode: CallMode; limits: Limits }, path: string): boolean {
    const vm = this.#context;
    const handles = [vm.newString(args), vm.newString(path), vm.newString(mode), vm.newString(shared), vm.newNumber(limits.maxEmits), vm.newNumber(limits.maxEmitBytes)];
    this.#deadline = Date.now() + Math.max(SETUP_MS, limits.timeoutMs);
    try {
      const result = vm.unwrapResult(vm.callFunction(this.#batch, vm.undefined, ...handles));
      const clean = vm.dump(result) === true;
      result.dispose();
      if (!clean) this.broken = true;
      return clean;
    } finally {
      for (const handle of handles) handle.dispose();
      this.#deadline = Number.POSITIVE_INFINITY;
    }
  }

  /**
   * Runs argument list `index` of the loaded batch until `deadline` (the request's budget): the JSON
   * text of `[ok, value, logs]`, or undefined when the deadline interrupted it.
   */
  runOne(index: number, limits: Limits, deadline: number): string | undefined {
    const vm = this.#context;
    const handle = vm.newNumber(index);
    this.#deadline = deadline;
    try {
      const result = vm.callFunction(this.#run, vm.undefined, handle);
      if (result.error) return this.#failed(result.error, limits);
      const text = vm.getString(result.value);
      result.value.dispose();
      return this.#answer(text, limits);
    } finally {
      handle.dispose();
      this.#deadline = Number.POSITIVE_INFINITY;
    }
  }

  /**
   * Runs argument lists `from` … `from + count - 1` of the loaded batch in one call into the context
   * (prelude-batch.ts), until the request's `deadline` or result bound (`charsLeft`), or until
   * `yieldAt` (time for a beat): one answer per document reached, as `runOne`'s, in order. Fewer
   * answers than `count` when it stopped early; the last is undefined when the deadline
   * interrupted that document, and after a failed one the context is broken.
   */
  runMany(from: number, count: number, limits: Limits, deadline: number, yieldAt: number, charsLeft: number): (string | undefined)[] {
    const vm = this.#context;
    const handles = [vm.newNumber(from), vm.newNumber(count), vm.newNumber(deadline), vm.newNumber(yieldAt), vm.newNumber(charsLeft)];
    this.#deadline = deadline;
    try {
      const result = vm.callFunction(this.#runMany, vm.undefined, ...handles);
      if (result.error) {
        const failed = this.#failed(result.error, limits);
        return [...this.#takenSoFar(limits), failed];
      }
      const text = vm.getString(result.value);
      result.value.dispose();
      return text === '' ? [] : text.split('\n').map((answer) => this.#answer(answer, limits));
    } finally {
      for (const handle of handles) handle.dispose();
      this.#deadline = Number.POSITIVE_INFINITY;
    }
  }

  /** The answers of the documents a batch finished before its call failed (none when the context cannot say). */
  #takenSoFar(limits: Limits): string[] {
    const vm = this.#context;
    this.#deadline = Number.POSITIVE_INFINITY;
    const result = vm.callFunction(this.#taken, vm.undefined);
    if (result.error) {
      result.error.dispose();
      return [];
    }
    const text = vm.getString(result.value);
    result.value.dispose();
    return text === '' ? [] : text.split('\n').map((answer) => this.#answer(answer, limits)!);
  }

  /** A call that threw out of the prelude (interrupted, out of memory, stack): the context is broken; undefined for a timeout. */
  #failed(error: QuickJSHandle, limits: Limits): string | undefined {
    const timedOut = Date.now() > this.#deadline;
    const message = String((this.#context.dump(error) as { message?: unknown } | undefined)?.message ?? 'failed');
    error.dispose();
    this.broken = true;
    if (timedOut) return undefined;
    if (message.includes('out of memory')) return failure('memory', `The function used more than ${limits.memoryBytes} bytes ([quickjs] memory_limit_bytes).`);
    return failure('crash', message);
  }

  /** One call's answer from the prelude, the context marked broken when the call left it unusable. */
  #answer(text: string, limits: Limits): string {
    if (text.startsWith('!')) {
      // The call left the global object in a state the prelude cannot undo: no later call may see it.
      this.broken = true;
      text = text.slice(1);
    }
    if (text.startsWith('[false,{"error":"InternalError","message":"out of memory"}')) {
      this.broken = true;
      return failure('memory', `The function used more than ${limits.memoryBytes} bytes ([quickjs] memory_limit_bytes).`);
    }
    return text;
  }

  /** The compile error of each path, null where the function compiles. */
  check(paths: readonly (readonly string[])[], limits: Limits): (string | null)[] {
    return paths.map((path) => {
      this.#deadline = Date.now() + Math.max(SETUP_MS, limits.timeoutMs);
      try {
        const vm = this.#context;
        const text = vm.newString(JSON.stringify(path));
        const result = vm.callFunction(this.#check, vm.undefined, text);
        text.dispose();
        if (result.error) {
          result.error.dispose();
          this.broken = true;
          return 'The function could not be compiled within the time and memory limits.';
        }
        const value = vm.dump(result.value) as string | null;
        result.value.dispose();
        return value;
      } finally {
        this.#deadline = Number.POSITIVE_INFINITY;
      }
    });
  }

  dispose(): void {
    this.#run.dispose();
    this.#runMany.dispose();
    this.#taken.dispose();
    this.#batch.dispose();
    this.#check.dispose();
    this.#context.dispose();
    this.#runtime.dispose();
  }
}

export { BEAT_MS };
