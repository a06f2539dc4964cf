import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { StartupError } from '../errors/startup-error.js';
import { headersTooLarge, badRequest, requestTimeout } from '../errors/catalog.js';
import type { CouchError } from '../errors/couch-error.js';
import { serialize } from './reply.js';
import { keepTickEntryShape } from './tick-shape.js';

/** Request headers beyond this many bytes are refused with 431 (docs/documents.md, "Limits and bad input"). */
const MAX_HEADER_BYTES = 64 * 1024;

interface ServerTimeouts {
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
function createServer(handler: Handler, timeouts: ServerTimeouts, tls?: { cert: Buffer; key: Buffer }): Server {
  keepTickEntryShape();
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
async function drain(server: Server, graceMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  timer.unref();
  await closed;
  clearTimeout(timer);
}

interface ListenerOptions {
  timeouts: () => ServerTimeouts;
  /** The PEM files of `[ssl]`, read when an HTTPS listener starts. */
  tlsFiles: () => { certFile: string; keyFile: string };
}

/** The HTTP and HTTPS listeners of one process, started on demand and drained together. */
export class Listeners {
  readonly #handler: Handler;
  readonly #options: ListenerOptions;
  readonly #servers: Server[] = [];

  constructor(handler: Handler, options: ListenerOptions) {
    this.#handler = handler;
    this.#options = options;
  }

  listen(port: number, bind: string): Promise<{ address: string; port: number }> {
    return this.#start(port, bind);
  }

  /** The HTTPS listener of `[ssl]` (`cert_file`, `key_file`). */
  listenTls(port: number, bind: string): Promise<{ address: string; port: number }> {
    const { certFile, keyFile } = this.#options.tlsFiles();
    let tls: { cert: Buffer; key: Buffer };
    try {
      tls = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
    } catch (error) {
      return Promise.reject(new StartupError(`[ssl] cert_file and key_file must be readable PEM files: ${(error as Error).message}`));
    }
    return this.#start(port, bind, tls);
  }

  /** A listener on a Unix socket (the heavy lane's, docs/workers.md), readable by this user only. */
  async listenPath(path: string): Promise<void> {
    const server = createServer(this.#handler, this.#options.timeouts());
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', (error: Error) => reject(new StartupError(`cannot listen on ${path}: ${error.message}`)));
      server.listen({ path, readableAll: false, writableAll: false }, () => resolveListen());
    });
    this.#servers.push(server);
  }

  drain(graceMs: number): Promise<void> {
    return Promise.all(this.#servers.map((server) => drain(server, graceMs))).then(() => undefined);
  }

  async #start(port: number, bind: string, tls?: { cert: Buffer; key: Buffer }): Promise<{ address: string; port: number }> {
    let server: Server;
    try {
      server = createServer(this.#handler, this.#options.timeouts(), tls);
    } catch (error) {
      throw new StartupError(`cannot start the ${tls ? 'HTTPS' : 'HTTP'} listener: ${(error as Error).message}`);
    }
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        const reason = error.code === 'EADDRINUSE' ? `port ${port} on ${bind} is already in use` : `cannot listen on ${bind}:${port}: ${error.message}`;
        reject(new StartupError(reason));
      });
      server.listen(port, bind, () => resolveListen());
    });
    this.#servers.push(server);
    const address = server.address() as AddressInfo;
    return { address: address.address, port: address.port };
  }
}
