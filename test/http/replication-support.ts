/**
 * Helpers of the replication HTTP tests: a streaming client for `_changes` feeds (every chunk with
 * its arrival time), and small builders for replicated revisions.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface FeedChunk {
  /** Milliseconds since the request was sent. */
  at: number;
  text: string;
}

export interface OpenFeed {
  /** Resolves with status and headers once they arrive. */
  readonly head: Promise<{ status: number; headers: IncomingHttpHeaders }>;
  /** Resolves when the server ends the response (or the client aborts it). */
  readonly done: Promise<{ status: number; headers: IncomingHttpHeaders; text: string; chunks: FeedChunk[]; elapsed: number; ended: boolean }>;
  /** Everything received so far. */
  text(): string;
  /** Resolves once the received text satisfies `predicate`; rejects after `timeoutMs`. */
  waitFor(predicate: (text: string) => boolean, timeoutMs?: number): Promise<string>;
  abort(): void;
}

export interface FeedOptions {
  method?: string;
  headers?: Record<string, string>;
  auth?: [string, string];
  body?: unknown;
}

/** Opens `path` on `baseUrl` and follows the response as it streams. */
export function openFeed(baseUrl: string, path: string, options: FeedOptions = {}): OpenFeed {
  const url = new URL(baseUrl);
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  if (options.auth) headers['Authorization'] = `Basic ${Buffer.from(`${options.auth[0]}:${options.auth[1]}`).toString('base64')}`;
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    payload = Buffer.from(JSON.stringify(options.body));
    headers['Content-Type'] = 'application/json';
  }
  const started = Date.now();
  const chunks: FeedChunk[] = [];
  let text = '';
  const waiters = new Set<() => void>();
  let resolveHead!: (value: { status: number; headers: IncomingHttpHeaders }) => void;
  let rejectHead!: (error: unknown) => void;
  const head = new Promise<{ status: number; headers: IncomingHttpHeaders }>((resolve, reject) => {
    resolveHead = resolve;
    rejectHead = reject;
  });
  let status = 0;
  let responseHeaders: IncomingHttpHeaders = {};
  let finished = false;
  const req = httpRequest({ host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers, agent: false });
  const done = new Promise<{ status: number; headers: IncomingHttpHeaders; text: string; chunks: FeedChunk[]; elapsed: number; ended: boolean }>((resolve, reject) => {
    const finish = (ended: boolean): void => {
      if (finished) return;
      finished = true;
      for (const wake of waiters) wake();
      resolve({ status, headers: responseHeaders, text, chunks, elapsed: Date.now() - started, ended });
    };
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      responseHeaders = res.headers;
      resolveHead({ status, headers: res.headers });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        chunks.push({ at: Date.now() - started, text: chunk });
        text += chunk;
        for (const wake of [...waiters]) wake();
      });
      res.on('end', () => finish(true));
      res.on('close', () => finish(false));
      res.on('error', () => finish(false));
    });
    req.on('error', (error) => {
      rejectHead(error);
      if (status === 0) reject(error);
      else finish(false);
    });
  });
  head.catch(() => undefined);
  req.end(payload);
  return {
    head,
    done,
    text: () => text,
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise<string>((resolve, reject) => {
        const check = (): void => {
          if (predicate(text)) {
            cleanup();
            resolve(text);
          } else if (finished) {
            cleanup();
            reject(new Error(`feed ended before the expected text arrived; got ${JSON.stringify(text)}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for the feed; got ${JSON.stringify(text)}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    abort: () => req.destroy(),
  };
}

/** Non-empty lines of a continuous feed, parsed. */
export function feedLines(text: string): Record<string, any>[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}

/** A hand-made revision as a replication peer sends it (32 hex digits). */
export const rev = (generation: number, digit: string): string => `${generation}-${digit.repeat(32)}`;

/** A document in the `_bulk_docs` new_edits=false form: `_rev` plus `_revisions` (newest first). */
export function replicated(id: string, path: string[], body: Record<string, unknown> = {}, deleted = false): Record<string, unknown> {
  const [newest] = path;
  const doc: Record<string, unknown> = {
    _id: id,
    _rev: newest,
    _revisions: { start: Number(newest!.split('-')[0]), ids: path.map((r) => r.slice(r.indexOf('-') + 1)) },
    ...body,
  };
  if (deleted) doc['_deleted'] = true;
  return doc;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
