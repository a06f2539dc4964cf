import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the proxy saw it: its line, its Content-Type and Accept, and the bytes each way. */
export interface Seen {
  method: string;
  url: string;
  contentType: string;
  accept: string;
  answerType: string;
  sentBytes: number;
  answerBytes: number;
}

export interface ProxyHooks {
  /** Rewrites a request's headers before it goes on (e.g. an old server's `Accept` handling). */
  headers?: (method: string, url: string, headers: IncomingHttpHeaders) => IncomingHttpHeaders;
  /** Answers instead of the server (e.g. 404 for an endpoint an old server lacks). */
  refuse?: (method: string, url: string) => { status: number; body: object } | undefined;
  /** Awaited before each chunk of an answer goes on, with the bytes answered so far. */
  beforeAnswerChunk?: (seen: Seen) => Promise<void>;
}

/**
 * A small HTTP proxy in front of a real server that records what passes (method, URL, types,
 * byte counts) and streams bodies both ways chunk by chunk, so a test sees how a client spoke.
 */
export class RecordingProxy {
  readonly seen: Seen[] = [];
  readonly #server: Server;
  readonly #upstream: URL;

  private constructor(upstream: string, hooks: ProxyHooks) {
    this.#upstream = new URL(upstream);
    this.#server = createServer((req, res) => {
      const seen: Seen = { method: req.method ?? 'GET', url: req.url ?? '/', contentType: String(req.headers['content-type'] ?? ''), accept: String(req.headers['accept'] ?? ''), answerType: '', sentBytes: 0, answerBytes: 0 };
      this.seen.push(seen);
      const refused = hooks.refuse?.(seen.method, seen.url);
      if (refused) {
        req.resume();
        res.writeHead(refused.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(refused.body));
        return;
      }
      const headers = hooks.headers ? hooks.headers(seen.method, seen.url, { ...req.headers }) : req.headers;
      const out = httpRequest({ host: this.#upstream.hostname, port: this.#upstream.port, method: req.method, path: req.url, headers: { ...headers, host: this.#upstream.host }, agent: false }, async (answer) => {
        seen.answerType = String(answer.headers['content-type'] ?? '');
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        try {
          for await (const chunk of answer) {
            await hooks.beforeAnswerChunk?.(seen);
            seen.answerBytes += (chunk as Buffer).length;
            if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
          }
          res.end();
        } catch {
          res.destroy();
        }
      });
      out.on('error', () => res.destroy());
      req.on('data', (chunk: Buffer) => (seen.sentBytes += chunk.length));
      req.on('error', () => out.destroy());
      req.pipe(out);
    });
  }

  static async start(upstream: string, hooks: ProxyHooks = {}): Promise<RecordingProxy> {
    const proxy = new RecordingProxy(upstream, hooks);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** A database URL through the proxy, with the credentials the server wants. */
  dbUrl(db: string, auth: [string, string]): string {
    return `http://${encodeURIComponent(auth[0])}:${encodeURIComponent(auth[1])}@127.0.0.1:${this.port}/${db}`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
