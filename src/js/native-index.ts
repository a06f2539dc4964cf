/**
 * Nouveau index functions run on the host where they can (native-subset.ts): the `index` global as
 * prelude-index.ts defines it, for the calls it accepts, under the same per-document bounds; the
 * documents the host is unsure of (a call it would refuse, a read that would throw, a bound near)
 * go to the sandbox in one call, and the outcomes are merged in order. A batch runs at most
 * `NATIVE_CHARS_PER_CALL` characters of documents on the host (the main thread) and no document
 * over `NATIVE_DOC_CHARS`: the rest goes to the sandbox, so no batch holds the main thread long.
 */
import type { Json, JsonObject } from '../json/json.js';
import type { Limits, Outcome } from './protocol.js';
import { compileNative, member, unsure, type HostFunction, type NativeFunction } from './native-subset.js';

/** Characters of document text one call runs on the host (about a millisecond of parsing). */
const NATIVE_CHARS_PER_CALL = 512 * 1024;
/** Documents longer than this always run in the sandbox. */
const NATIVE_DOC_CHARS = 64 * 1024;
/** Compiled sources kept (a design document's index functions are few). */
const KEPT_SOURCES = 256;

interface IndexRow {
  type: string;
  name: string;
  value: string | number;
  store: boolean;
  facet: boolean;
}

/** Whether `value` is of the type `index(type, …)` accepts (prelude-index.ts). */
function accepted(type: string, value: unknown): value is string | number {
  if (type === 'double') return typeof value === 'number' && Number.isFinite(value);
  if (type === 'string' || type === 'text') return typeof value === 'string';
  // A stored NaN would become null in the sandbox's JSON: left to it.
  return type === 'stored' && (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)));
}

/** At least the characters of a row's JSON (`record` in prelude.ts counts them): every character escaped. */
const rowCharsAtMost = (name: string, value: string | number): number => 64 + 6 * name.length + (typeof value === 'string' ? 6 * value.length + 2 : 24);

function indexHost(rows: IndexRow[], limits: Limits): HostFunction {
  let chars = 0;
  return ([type, name, value, options]) => {
    if (typeof type !== 'string' || typeof name !== 'string' || name.startsWith('_') || !accepted(type, value)) unsure();
    chars += rowCharsAtMost(name, value);
    if (rows.length >= limits.maxEmits || chars > limits.maxEmitBytes) unsure();
    const opts = options !== null && typeof options === 'object' ? options : {};
    const stored = type === 'stored';
    // -0 leaves the sandbox as JSON, as 0.
    rows.push({ type, name, value: value === 0 ? 0 : value, store: stored || member(opts, 'store') === true, facet: !stored && member(opts, 'facet') === true });
  };
}

/** The outcome of one document, or undefined when the sandbox must run it. */
function runOne(fn: NativeFunction, text: string, limits: Limits): Outcome | undefined {
  const rows: IndexRow[] = [];
  try {
    fn(JSON.parse(text), { index: indexHost(rows, limits) });
  } catch {
    // Unsure, or the host's own limits (a stack too deep): the sandbox answers.
    return undefined;
  }
  return { ok: true, value: rows as unknown as Json, logs: [] };
}

const compiled = new Map<string, NativeFunction | undefined>();

/** The native form of the index function at `path` of `ddoc`, when it has one. */
export function nativeIndexFunction(ddoc: JsonObject, path: readonly string[]): NativeFunction | undefined {
  let source: Json | undefined = ddoc;
  for (const part of path) source = source !== null && typeof source === 'object' && !Array.isArray(source) ? source[part] : undefined;
  if (typeof source !== 'string') return undefined;
  if (!compiled.has(source)) {
    if (compiled.size >= KEPT_SOURCES) compiled.clear();
    compiled.set(source, compileNative(source, ['index']));
  }
  return compiled.get(source);
}

/** The outcomes of `docTexts`: on the host where it can, the rest through `inSandbox`, in order. */
export async function indexNativeFirst(fn: NativeFunction, docTexts: readonly string[], limits: Limits, inSandbox: (texts: readonly string[]) => Promise<Outcome[]>): Promise<Outcome[]> {
  let budget = NATIVE_CHARS_PER_CALL;
  const outcomes = docTexts.map((text) => {
    if (text.length > NATIVE_DOC_CHARS || budget < text.length) return undefined;
    budget -= text.length;
    return runOne(fn, text, limits);
  });
  const rest = outcomes.flatMap((outcome, i) => (outcome === undefined ? [i] : []));
  if (rest.length > 0) {
    const answers = await inSandbox(rest.map((i) => docTexts[i]!));
    rest.forEach((i, k) => (outcomes[i] = answers[k]));
  }
  return outcomes as Outcome[];
}
