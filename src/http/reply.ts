import type { ServerResponse } from 'node:http';
import { JsonText } from '../json/json-text.js';
import type { Json } from '../storage/storage.js';

/** What an endpoint answers; the response step adds the common headers and writes it. */
export interface Reply {
  status: number;
  /** JSON values (strings included) are serialised with a trailing newline; a Buffer or a `JsonText` is sent as is. */
  body?: Json | object | Buffer | string | JsonText;
  headers?: Record<string, string | string[]>;
  /**
   * A streamed body (continuous `_changes`, …): called instead of writing `body`. The status and
   * headers go out with the first chunk, so an error thrown before any `write` is still answered
   * as an ordinary error reply; after that, an error can only cut the response.
   */
  stream?: (out: ReplyStream) => Promise<void>;
}

/** Where a streamed body goes. */
export interface ReplyStream {
  /** Sends a chunk (the first one sends status and headers); resolves once the socket takes more. */
  write(chunk: string | Buffer): Promise<void>;
  /** True once status and headers were sent. */
  readonly started: boolean;
  /** Aborted when the client goes away: stop producing. */
  readonly signal: AbortSignal;
}

export function json(status: number, body: Json | object, headers?: Record<string, string | string[]>): Reply {
  return { status, body, headers };
}

/** Serialises a JSON reply body as CouchDB does: compact, newline-terminated. */
export function serialize(body: Reply['body']): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof JsonText) return Buffer.from(body.text, 'utf8');
  return Buffer.from(`${JSON.stringify(body)}\n`, 'utf8');
}

/** Response headers as written: names as given, values as `writeHead` takes them. */
export type OutgoingHeaders = Record<string, string | string[] | number>;

export interface WriteOptions {
  head: boolean;
  requestId: string;
  /** Milliseconds the request's body took to read (`X-CouchDB-Body-Time`, on every answer as CouchDB). */
  bodyTime: number;
  serverHeader: string;
  /** Called with the complete headers just before they are written (CORS needs the final names). */
  decorate?: (headers: OutgoingHeaders) => void;
}

function commonHeaders(reply: Reply, options: WriteOptions, withBody: boolean): OutgoingHeaders {
  // Built in place rather than with spreads: this runs once per request.
  const headers: OutgoingHeaders = withBody
    ? { 'Content-Type': 'application/json', 'Cache-Control': 'must-revalidate', 'X-Couch-Request-ID': options.requestId, 'X-CouchDB-Body-Time': options.bodyTime, Server: options.serverHeader }
    : { 'Cache-Control': 'must-revalidate', 'X-Couch-Request-ID': options.requestId, 'X-CouchDB-Body-Time': options.bodyTime, Server: options.serverHeader };
  const extra = reply.headers;
  if (extra !== undefined) for (const name of Object.keys(extra)) headers[name] = extra[name]!;
  return headers;
}

/**
 * Runs `reply.stream` against `res` (chunked). Resolves when the body is complete, with the error
 * the stream threw, if any, and whether the status line had gone out by then.
 */
export async function writeStreamingReply(
  res: ServerResponse,
  reply: Reply,
  options: WriteOptions,
): Promise<{ started: boolean; error?: unknown }> {
  const controller = new AbortController();
  const onClose = (): void => controller.abort();
  res.on('close', onClose);
  let started = false;
  const start = (): void => {
    if (started) return;
    started = true;
    const headers = commonHeaders(reply, options, true);
    options.decorate?.(headers);
    res.writeHead(reply.status, headers);
  };
  const out: ReplyStream = {
    get started() {
      return started;
    },
    signal: controller.signal,
    write(chunk: string | Buffer): Promise<void> {
      start();
      if (res.destroyed || controller.signal.aborted) return Promise.resolve();
      if (res.write(chunk)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    },
  };
  try {
    if (!options.head) await reply.stream!(out);
    start();
    res.end();
    return { started: true };
  } catch (error) {
    return { started, error };
  } finally {
    res.off('close', onClose);
  }
}

function payloadOf(body: Exclude<Reply['body'], undefined>): string | Buffer {
  if (Buffer.isBuffer(body)) return body;
  return body instanceof JsonText ? body.text : `${JSON.stringify(body)}\n`;
}

export function writeReply(res: ServerResponse, reply: Reply, options: WriteOptions): void {
  // A 204 has no body, so no Content-Type and (RFC 9110 §8.6) no Content-Length.
  const noContent = reply.status === 204;
  // A JSON body goes out as a string: Node then sends headers and body in one write() instead of a
  // writev() of two chunks, which is measurable on small answers (the common case).
  const payload: string | Buffer = noContent || reply.body === undefined ? '' : payloadOf(reply.body);
  // A 304 describes the representation the client holds: no Content-Type of its own, as CouchDB.
  const headers = commonHeaders(reply, options, !noContent && reply.status !== 304);
  if (!noContent) headers['Content-Length'] = reply.body instanceof JsonText ? reply.body.byteLength : typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  options.decorate?.(headers);
  res.writeHead(reply.status, headers);
  res.end(options.head || noContent ? undefined : payload);
}
