/**
 * The replicator's HTTP client for one endpoint: keep-alive sockets (at most `http_connections`),
 * a socket timeout (`connection_timeout`), retries with exponential backoff (`retries_per_request`)
 * for network errors, 408, 429 and 5xx, and the endpoint's identity: a cookie session (POST
 * /_session, refreshed on 401/403, as couch_replicator_auth_session), else Basic, plus the
 * endpoint's own headers (a JWT bearer, proxy headers). Credentials never enter an error message.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import type { Json } from '../json/json.js';
import { isTooLarge, readBounded, tooLarge } from './bounded-read.js';
import type { Endpoint } from './endpoint.js';
import { isTransient, RemoteError, ReplicationSpecError } from './replication-errors.js';

export interface ClientSettings {
  connectionTimeoutMs: number;
  retries: number;
  httpConnections: number;
  userAgent: string;
  /** `[replicator] max_response_size`: the most bytes of one answer held whole. */
  maxResponseBytes: number;
}

interface RemoteResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

interface RequestOptions {
  query?: Record<string, string>;
  body?: Json;
  headers?: Record<string, string>;
  /** How long the socket may stay silent (a long poll waits longer than a plain request). */
  timeoutMs?: number;
}

const MAX_WAIT_MS = 300000;
const FIRST_WAIT_MS = 250;

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const stop = (): void => (clearTimeout(timer), resolve());
    const timer = setTimeout(() => (signal?.removeEventListener('abort', stop), resolve()), ms);
    signal?.addEventListener('abort', stop, { once: true });
  });

export class RemoteClient {
  readonly endpoint: Endpoint;
  readonly #settings: ClientSettings;
  readonly #agent: http.Agent;
  readonly #signal: AbortSignal | undefined;
  #cookie: string | undefined;
  #sessionTried = false;

  constructor(endpoint: Endpoint, settings: ClientSettings, signal?: AbortSignal) {
    this.endpoint = endpoint;
    this.#settings = settings;
    this.#signal = signal;
    const Agent = endpoint.url.startsWith('https:') ? https.Agent : http.Agent;
    this.#agent = new Agent({ keepAlive: true, maxSockets: Math.max(1, settings.httpConnections) });
  }

  close(): void {
    this.#agent.destroy();
  }

  get maxResponseBytes(): number {
    return this.#settings.maxResponseBytes;
  }

  /** A request relative to the database URL (`''` is the database itself), retried while transient. */
  request(method: string, path: string, options: RequestOptions = {}): Promise<RemoteResponse> {
    return this.retrying(() => this.#authenticated(method, path, options));
  }

  /** Runs `attempt` again while it fails with a transient error, `retries_per_request` times, waiting twice as long each time. */
  async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    for (let tried = 0; ; tried++) {
      try {
        return await attempt();
      } catch (error) {
        if (!isTransient(error) || tried >= this.#settings.retries || this.#signal?.aborted) throw error;
        await sleep(Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** tried), this.#signal);
      }
    }
  }

  /** The JSON answer; a status of 400 or more becomes a `RemoteError` with the remote's error and reason. */
  async json<T = Json>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.request(method, path, options);
    if (response.status >= 400) throw errorOf(response);
    return parseBody(response) as T;
  }

  async #authenticated(method: string, path: string, options: RequestOptions): Promise<RemoteResponse> {
    if (this.endpoint.session && !this.#sessionTried) await this.#login();
    const response = await this.#send(method, this.#url(path, options.query), options);
    if ((response.status === 401 || response.status === 403) && this.#cookie !== undefined) {
      // The cookie expired or was revoked: log in again once and repeat the request.
      await this.#login();
      return this.#send(method, this.#url(path, options.query), options);
    }
    return response;
  }

  async #login(): Promise<void> {
    this.#sessionTried = true;
    this.#cookie = undefined;
    const { username, password } = this.endpoint.basic!;
    const url = new URL('../_session', new URL(this.endpoint.url.replace(/\?.*$/, '')));
    const response = await this.#send('POST', url, { body: { name: username, password } }, false);
    if (response.status === 401) throw new RemoteError(401, 'unauthorized', `unauthorized to access or create database ${this.endpoint.url}`);
    const cookie = [response.headers['set-cookie'] ?? []].flat().find((line) => line.startsWith('AuthSession='));
    // A server without cookie sessions (404, 405, no cookie) is then spoken to with Basic.
    if (response.status < 300 && cookie !== undefined) this.#cookie = cookie.split(';')[0]!;
  }

  #url(path: string, query: Record<string, string> | undefined): URL {
    const url = new URL(path, this.endpoint.url);
    for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, value);
    return url;
  }

  #headers(options: RequestOptions, withIdentity: boolean): Record<string, string> {
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': this.#settings.userAgent };
    for (const [name, value] of this.endpoint.headers) headers[name] = value;
    if (withIdentity && this.#cookie !== undefined) headers['Cookie'] = this.#cookie;
    else if (withIdentity && this.endpoint.basic) {
      const { username, password } = this.endpoint.basic;
      headers['Authorization'] = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    }
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    return { ...headers, ...options.headers };
  }

  /**
   * A request whose answer is read as a stream (a `multipart/mixed` `open_revs`): retried while
   * transient up to the answer's headers; the caller reads `body` to its end or destroys it.
   */
  stream(method: string, path: string, options: RequestOptions = {}): Promise<StreamedResponse> {
    let relogged = false;
    return this.retrying(async () => {
      if (this.endpoint.session && !this.#sessionTried) await this.#login();
      const { request, response } = this.#start(method, this.#url(path, options.query), options, true);
      request.end();
      const message = await response;
      const status = message.statusCode ?? 0;
      if (status < 400) return { status, headers: message.headers, body: message };
      // An error answer is small: read it whole, and retry or log in again as `request` would.
      const whole = await this.#collected(response, method, path);
      if ((status === 401 || status === 403) && this.#cookie !== undefined && !relogged) {
        relogged = true;
        await this.#login();
        throw new RemoteError(0, 'session_expired', 'logged in again');
      }
      if (isTransient(errorOf(whole))) throw errorOf(whole);
      return { status, headers: message.headers, body: Readable.from([whole.body]) };
    });
  }

  /**
   * A request whose body the caller writes (a `multipart/related` PUT streamed from the source):
   * not retried here, since the body cannot be sent twice. `answer` settles with the response, which
   * may come before the body is all sent (a refusal): `answered` then turns true and writing stops.
   */
  async upload(method: string, path: string, options: RequestOptions): Promise<Upload> {
    if (this.endpoint.session && !this.#sessionTried) await this.#login();
    const { request, response } = this.#start(method, this.#url(path, options.query), options, true);
    const upload: Upload = { request, answered: false, answer: this.#collected(response, method, path) };
    upload.answer.then(() => (upload.answered = true), () => (upload.answered = true));
    return upload;
  }

  #start(method: string, url: URL, options: RequestOptions, withIdentity: boolean): { request: http.ClientRequest; response: Promise<http.IncomingMessage> } {
    const transport = url.protocol === 'https:' ? https : http;
    let request: http.ClientRequest;
    try {
      request = transport.request(url, { method, agent: this.#agent, headers: this.#headers(options, withIdentity), signal: this.#signal });
    } catch (error) {
      // Thrown here, the refusal reaches the caller's await (every caller is async): it fails the job, not the process.
      throw new ReplicationSpecError(400, 'bad_request', `the request to ${this.endpoint.url} cannot be sent: ${(error as Error).message}`);
    }
    const response = new Promise<http.IncomingMessage>((resolve, reject) => {
      request.once('response', resolve);
      request.on('error', (error) => reject(new RemoteError(0, 'network_error', `${error.message} (${method} ${this.endpoint.url})`)));
    });
    request.setTimeout(options.timeoutMs ?? this.#settings.connectionTimeoutMs, () => request.destroy(new Error('request timed out')));
    return { request, response };
  }

  #send(method: string, url: URL, options: RequestOptions, withIdentity = true): Promise<RemoteResponse> {
    const body = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const { request, response } = this.#start(method, url, options, withIdentity);
    request.end(body);
    return this.#collected(response, method, url.pathname);
  }

  /** The whole answer of a request, at most `max_response_size` bytes. */
  async #collected(response: Promise<http.IncomingMessage>, method: string, path: string): Promise<RemoteResponse> {
    const message = await response;
    const what = `the answer of ${new URL(this.endpoint.url).origin} to ${method} ${path.replace(/\?.*$/, '')}`;
    const limit = this.#settings.maxResponseBytes;
    if (Number(message.headers['content-length'] ?? 0) > limit) throw (message.destroy(), tooLarge(what, limit));
    try {
      return { status: message.statusCode ?? 0, headers: message.headers, body: await readBounded(message, limit, what) };
    } catch (error) {
      if (isTooLarge(error)) throw error;
      throw new RemoteError(0, 'network_error', (error as Error).message);
    }
  }
}

interface StreamedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Readable;
}

export interface Upload {
  request: http.ClientRequest;
  answered: boolean;
  answer: Promise<RemoteResponse>;
}

function parseBody(response: RemoteResponse): Json {
  try {
    return JSON.parse(response.body.toString('utf8')) as Json;
  } catch {
    throw new RemoteError(response.status >= 400 ? response.status : 502, 'bad_response', 'the remote answered with something that is not JSON');
  }
}

/** The remote's `{"error","reason"}` as a `RemoteError`. */
export function errorOf(response: RemoteResponse): RemoteError {
  let parsed: Json = null;
  try {
    parsed = JSON.parse(response.body.toString('utf8')) as Json;
  } catch {
    // Not JSON: the status speaks alone.
  }
  const fields = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  const error = typeof fields['error'] === 'string' ? fields['error'] : `http_${response.status}`;
  const reason = typeof fields['reason'] === 'string' ? fields['reason'] : '';
  return new RemoteError(response.status, error, reason);
}
