import type { ServerResponse } from 'node:http';
import type { Json } from '../storage/storage.js';

/** What an endpoint answers; the response step adds the common headers and writes it. */
export interface Reply {
  status: number;
  /** JSON values (strings included) are serialised with a trailing newline; a Buffer is sent as is. */
  body?: Json | object | Buffer | string;
  headers?: Record<string, string | string[]>;
}

export function json(status: number, body: Json | object, headers?: Record<string, string | string[]>): Reply {
  return { status, body, headers };
}

/** Serialises a JSON reply body as CouchDB does: compact, newline-terminated. */
export function serialize(body: Reply['body']): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(`${JSON.stringify(body)}\n`, 'utf8');
}

/** Response headers as written: names as given, values as `writeHead` takes them. */
export type OutgoingHeaders = Record<string, string | string[] | number>;

export interface WriteOptions {
  head: boolean;
  requestId: string;
  serverHeader: string;
  /** Called with the complete headers just before they are written (CORS needs the final names). */
  decorate?: (headers: OutgoingHeaders) => void;
}

export function writeReply(res: ServerResponse, reply: Reply, options: WriteOptions): void {
  // A 204 has no body, so no Content-Type and (RFC 9110 §8.6) no Content-Length.
  const noContent = reply.status === 204;
  // A JSON body goes out as a string: Node then sends headers and body in one write() instead of a
  // writev() of two chunks, which is measurable on small answers (the common case).
  const payload: string | Buffer = noContent || reply.body === undefined ? '' : Buffer.isBuffer(reply.body) ? reply.body : `${JSON.stringify(reply.body)}\n`;
  const headers: OutgoingHeaders = {
    ...(noContent ? {} : { 'Content-Type': 'application/json' }),
    'Cache-Control': 'must-revalidate',
    'X-Couch-Request-ID': options.requestId,
    Server: options.serverHeader,
    ...reply.headers,
  };
  if (!noContent) headers['Content-Length'] = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  options.decorate?.(headers);
  res.writeHead(reply.status, headers);
  res.end(options.head || noContent ? undefined : payload);
}
