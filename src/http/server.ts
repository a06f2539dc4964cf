import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { headersTooLarge, badRequest, requestTimeout } from '../errors/catalog.js';
import type { CouchError } from '../errors/couch-error.js';
import { serialize } from './reply.js';

/** Request headers beyond this many bytes are refused with 431 (DESIGN §5). */
export const MAX_HEADER_BYTES = 64 * 1024;

export interface ServerTimeouts {
  /** Milliseconds a client may take to send its headers (slowloris defence). */
  headersTimeout: number;
  /** Milliseconds a client may take to send a whole request. */
  requestTimeout: number;
  /** Milliseconds an idle keep-alive connection is kept. */
  keepAliveTimeout: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * A node:http (or https) server with Divan's limits: header size, timeouts, and JSON answers for
 * requests that never reach the pipeline (oversized headers, malformed request lines).
 */
export function createServer(handler: Handler, timeouts: ServerTimeouts, tls?: { cert: Buffer; key: Buffer }): Server {
  const options = {
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: timeouts.headersTimeout,
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    // How often Node looks for connections past their header/request deadline.
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(timeouts.headersTimeout / 4))),
  };
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    void handler(req, res);
  };
  const server: Server = tls ? createHttpsServer({ ...options, ...tls }, listener) : createHttpServer(options, listener);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || (socket as Socket & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const failure: CouchError =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? headersTooLarge()
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? requestTimeout()
          : badRequest('Malformed HTTP request.');
    const body = serialize(failure.toJSON());
    socket.end(
      `HTTP/1.1 ${failure.status} ${statusText(failure.status)}\r\nContent-Type: application/json\r\nCache-Control: must-revalidate\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString('utf8')}`,
    );
  });
  return server;
}

function statusText(status: number): string {
  return { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[status] ?? 'Error';
}

/** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes what is left. */
export async function drain(server: Server, graceMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  timer.unref();
  await closed;
  clearTimeout(timer);
}
