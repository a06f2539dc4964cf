import type { IncomingMessage, ServerResponse } from 'node:http';
import { createGunzip } from 'node:zlib';
import type { Authenticated, AuthRequest } from '../auth/types.js';
import type { UserCtx } from '../identity/user-ctx.js';
import { badContentType, badRequest, documentTooLarge, invalidJson, requestEntityTooLarge } from '../errors/catalog.js';
import type { CouchError } from '../errors/couch-error.js';
import { tallySignal } from '../turns/request-slices.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

interface BodyLimits {
  /** `[chttpd] max_http_request_size`: any body. */
  maxRequestBytes: number;
}

/** One HTTP request as the router and endpoints see it: decoded path segments, query, body readers. */
export class Request implements AuthRequest {
  readonly raw: IncomingMessage;
  readonly method: string;
  readonly segments: readonly string[];
  readonly path: string;
  readonly peer: string;
  readonly secure: boolean;
  /** The socket peer is a trusted proxy, so its X-Forwarded-* headers are believed. */
  readonly viaTrustedProxy: boolean;
  readonly id: string;
  auth: Authenticated = { userCtx: { name: null, roles: [] } };
  readonly #limits: BodyLimits;
  readonly #response: ServerResponse | undefined;
  #signal: AbortSignal | undefined;
  #bodyRead = false;
  /** Milliseconds spent reading the body (CouchDB's `X-CouchDB-Body-Time`); 0 when none was read whole. */
  bodyMilliseconds = 0;
  /** How many `_rewrite`s led to this request (`[chttpd] rewrite_limit` bounds them). */
  readonly rewrites: number;
  /** A body given instead of the connection's (a rewrite's, or one a rewrite function already read). */
  readonly #presetBody: Buffer | undefined;
  /** Headers a rewrite function set, over the client's. */
  readonly #headers: IncomingMessage['headers'] | undefined;

  /** The query as given: its text until an endpoint reads it. */
  #query: URLSearchParams | string;

  /** `query` may be the text after `?`: it is parsed when first read. */
  constructor(raw: IncomingMessage, init: { method?: string; segments: string[]; query: URLSearchParams | string; path: string; peer: string; secure: boolean; viaTrustedProxy: boolean; id: string; limits: BodyLimits; response?: ServerResponse; rewrites?: number; body?: Buffer; headers?: IncomingMessage['headers'] }) {
    this.raw = raw;
    this.method = init.method ?? raw.method ?? 'GET';
    this.segments = init.segments;
    this.#query = init.query;
    this.path = init.path;
    this.peer = init.peer;
    this.secure = init.secure;
    this.viaTrustedProxy = init.viaTrustedProxy;
    this.id = init.id;
    this.#limits = init.limits;
    this.#response = init.response;
    this.rewrites = init.rewrites ?? 0;
    this.#presetBody = init.body;
    this.#headers = init.headers;
  }

  /**
   * The request a `_rewrite` makes of this one: another method, path and query, maybe other
   * headers and body, the same caller and connection, one rewrite more.
   */
  rewritten(target: { method: string; segments: string[]; query: string; path: string; headers?: IncomingMessage['headers']; body?: Buffer }): Request {
    const request = new Request(this.raw, {
      ...target,
      peer: this.peer, secure: this.secure, viaTrustedProxy: this.viaTrustedProxy, id: this.id, limits: this.#limits,
      ...(this.#response ? { response: this.#response } : {}),
      rewrites: this.rewrites + 1,
      headers: target.headers ?? this.#headers,
      body: target.body ?? this.#presetBody,
    });
    request.auth = this.auth;
    return request;
  }

  /**
   * The same request at another path and query (`/{db}/_partition/{p}/_all_docs` answered as
   * `/{db}/_all_docs?partition=p`): one caller, one body, one connection.
   */
  retargeted(segments: string[], query: URLSearchParams): Request {
    const request = new Request(this.raw, { method: this.method, segments, query, path: this.path, peer: this.peer, secure: this.secure, viaTrustedProxy: this.viaTrustedProxy, id: this.id, limits: this.#limits, ...(this.#response ? { response: this.#response } : {}), rewrites: this.rewrites, headers: this.#headers, body: this.#presetBody });
    request.auth = this.auth;
    return request;
  }

  /**
   * Aborted when the connection closes before the answer was sent (the client went away): long
   * scans check it between slices of work and stop. Listened for only by the endpoints that ask.
   */
  get signal(): AbortSignal {
    if (this.#signal !== undefined) return this.#signal;
    const controller = new AbortController();
    this.#signal = controller.signal;
    const response = this.#response;
    if (response === undefined) return this.#signal;
    tallySignal(this.#signal, response);
    const closed = (): void => {
      if (!response.writableFinished) controller.abort();
    };
    if (response.closed) closed();
    else response.once('close', closed);
    return this.#signal;
  }

  get query(): URLSearchParams {
    if (typeof this.#query === 'string') this.#query = new URLSearchParams(this.#query);
    return this.#query;
  }

  /** Whether the body is one a rewrite gave rather than the connection's. */
  get hasPresetBody(): boolean {
    return this.#presetBody !== undefined;
  }

  get headers(): IncomingMessage['headers'] {
    return this.#headers ?? this.raw.headers;
  }

  get userCtx(): UserCtx {
    return this.auth.userCtx;
  }

  header(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  /** The primary Content-Type (before `;`), as sent. */
  contentType(): string {
    return (this.header('content-type') ?? '').split(';', 1)[0]!.trim();
  }

  /**
   * Reads the whole body, refusing it with 413 as soon as it passes `maxBytes` (never buffering
   * more than that), and inflating `Content-Encoding: gzip` under the same limit.
   */
  async body(maxBytes: number = this.#limits.maxRequestBytes, tooLarge: () => CouchError = requestEntityTooLarge): Promise<Buffer> {
    if (this.#bodyRead) throw new Error('request body read twice');
    this.#bodyRead = true;
    const limit = Math.min(maxBytes, this.#limits.maxRequestBytes);
    if (this.#presetBody !== undefined) {
      if (this.#presetBody.length > limit) throw tooLarge();
      return this.#presetBody;
    }
    const declared = Number(this.header('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > this.#limits.maxRequestBytes) throw requestEntityTooLarge();
    const encoding = (this.header('content-encoding') ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity' && encoding !== 'gzip') {
      throw badContentType(`${encoding} is not a supported content encoding.`);
    }
    let source: NodeJS.ReadableStream = this.raw;
    if (encoding === 'gzip') {
      const gunzip = createGunzip();
      // pipe() does not pass errors on: a client cut off mid-body would leave this read waiting forever.
      this.raw.once('error', (error) => gunzip.destroy(error));
      source = this.raw.pipe(gunzip);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const started = performance.now();
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > limit) {
          if (source !== this.raw) (source as NodeJS.ReadableStream & { destroy(): void }).destroy();
          throw tooLarge();
        }
        chunks.push(chunk);
      }
    } catch (error) {
      if ((error as { code?: string }).code === 'Z_DATA_ERROR' || (error as { code?: string }).code === 'Z_BUF_ERROR') {
        throw badRequest('Request body is not valid gzip data.');
      }
      // The client went away (or a timeout cut it off) before the end of its body: no server error.
      if ((error as { code?: string }).code === 'ECONNRESET') throw badRequest('The request body ended early.');
      throw error;
    } finally {
      this.bodyMilliseconds = Math.floor(performance.now() - started);
    }
    return Buffer.concat(chunks, size);
  }

  /**
   * The body as a stream, for bodies that are never held whole (attachments). Refuses up front a
   * body whose declared length passes `[chttpd] max_http_request_size`; the reader applies its own limit.
   */
  stream(): AsyncIterable<Buffer> {
    if (this.#bodyRead) throw new Error('request body read twice');
    this.#bodyRead = true;
    const declared = Number(this.header('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > this.#limits.maxRequestBytes) throw requestEntityTooLarge();
    const preset = this.#presetBody;
    if (preset !== undefined) return (async function* () { yield preset; })();
    return this.raw;
  }

  /** Parses the body as JSON once (last duplicate key wins, as CouchDB's decoder). */
  async json(maxBytes?: number): Promise<unknown> {
    const bytes = await this.body(maxBytes, maxBytes === undefined ? requestEntityTooLarge : documentTooLarge);
    return parseJsonBytes(bytes);
  }

  /** Drains an unread body so keep-alive connections stay usable. */
  async discardBody(): Promise<void> {
    if (this.#bodyRead || this.raw.complete || this.#presetBody !== undefined) return;
    this.#bodyRead = true;
    this.raw.resume();
  }
}

export function parseJsonBytes(bytes: Buffer): unknown {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw invalidJson();
  }
  return parseJsonText(text);
}

/**
 * JSON nesting deeper than this is refused with 400. JSON.parse accepts any depth, but
 * JSON.stringify (revision hashing, storage, the reply) overflows the stack at a few thousand
 * levels, which would be a 500 or, in the reply itself, a crash.
 */
export const MAX_JSON_DEPTH = 512;

/** JSON.parse (last duplicate key wins) with the nesting limit; every failure is a 400. */
export function parseJsonText(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidJson();
  }
  if (nestingExceeds(text, MAX_JSON_DEPTH)) throw badRequest(`JSON is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  return value;
}

/** Whether valid JSON `text` opens more than `max` arrays/objects at once (brackets in strings skipped). */
function nestingExceeds(text: string, max: number): boolean {
  // Deeper than `max` needs more than `max` opening and as many closing brackets.
  if (text.length <= 2 * max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: a backslash escapes the next character.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}
