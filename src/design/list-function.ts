/**
 * Running a list function over rows (couch_mrview_show:list_cb and render.js runList): the
 * function gets `(head, req)` and reads rows with `getRow()`; its messages carry the output so far
 * and, after a `start({code, headers})`, the response head. The head may change until the first
 * non-empty output leaves (a `start` after that is too late, as in CouchDB); the rows reach the
 * sandbox a batch at a time, taken from `rows` only as the function asks for them.
 */
import { CouchError, isCouchError } from '../errors/couch-error.js';
import { javascriptError } from '../errors/catalog.js';
import type { Json, JsonObject } from '../json/json.js';
import type { DesignDoc, JsSandbox } from '../js/sandbox.js';
import { lists } from './function-types/lists.js';
import { isObject } from './function-types/function-type.js';
import { renderedResponse } from './render-response.js';

/** Where a list's output goes: its head (status and headers) and its text. */
interface ListSink {
  /** The head as the function's latest `start()` set it (the default head before any). */
  head(status: number, headers: Record<string, string>): void;
  write(text: string): Promise<void>;
}

interface ListCall {
  readonly sandbox: JsSandbox;
  readonly db: string;
  readonly ddoc: DesignDoc;
  readonly name: string;
  readonly head: JsonObject;
  readonly req: JsonObject;
  readonly rows: AsyncIterator<JsonObject[]>;
}

/**
 * A chunk's text as CouchDB writes a chunk (an iolist): a string as it is, an array as its strings
 * (nested arrays too) in order; anything else (a number, an object) writes nothing, as CouchDB's
 * answer to `return {a: 1}` is an empty body.
 */
function chunkText(chunk: Json): string {
  if (typeof chunk === 'string') return chunk;
  return Array.isArray(chunk) ? chunk.map(chunkText).join('') : '';
}

/** One message of the function, `[label, chunks, start?]`: the head when given, then the chunks' text. */
async function deliver(message: Json, sink: ListSink): Promise<void> {
  if (!Array.isArray(message)) throw javascriptError('render_error', 'undefined response from list function');
  const [, chunks, start] = message;
  if (message.length > 2) {
    // chttpd_external:parse_external_response: `code` and `headers`; without a Content-Type, application/json.
    const { status, headers } = renderedResponse(isObject(start) ? start : {}, 200);
    sink.head(status, headers);
  }
  const text = Array.isArray(chunks) ? chunks.map(chunkText).join('') : '';
  if (text !== '') await sink.write(text);
}

/**
 * Runs `lists.{name}`; resolves once its output is all written. A failed call throws CouchDB's
 * error (render.js renderError through chttpd): the caller answers it, or appends it when output
 * already left. An error reading the rows ends the function and is thrown here.
 */
export async function runList(call: ListCall, sink: ListSink): Promise<void> {
  let readError: unknown;
  const exchange = async (text: string): Promise<string> => {
    try {
      await deliver(JSON.parse(text) as Json, sink);
      const next = await call.rows.next();
      return JSON.stringify(next.done === true ? [] : next.value);
    } catch (error) {
      readError ??= error;
      return '"abort"';
    }
  };
  const outcome = await call.sandbox.list(call.db, call.ddoc, [lists.member, call.name], [call.head, call.req], exchange);
  if (readError !== undefined) throw readError;
  if (!outcome.ok) throw lists.errorOf(outcome);
  await deliver(outcome.value, sink);
}

/** The text CouchDB appends to a list whose output already left when it failed (chttpd:send_chunked_error). */
export function chunkedErrorText(error: unknown): string {
  const failure = isCouchError(error) ? error : new CouchError(500, 'unknown_error', String((error as Error)?.message ?? error));
  return `\n${JSON.stringify({ code: failure.status, error: failure.error, reason: failure.reason })}\n`;
}
