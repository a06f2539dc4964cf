/**
 * The replicator's HTTP client for one endpoint: keep-alive sockets (at most `http_connections`),
 * a socket timeout (`connection_timeout`), retries with exponential backoff (`retries_per_request`)
 * for network errors, 408, 429 and 5xx, and the endpoint's identity: a cookie session (POST
 * /_session, refreshed on 401/403, as couch_replicator_auth_session), else Basic, plus the
 * endpoint's own headers (a JWT bearer, proxy headers). Credentials never enter an error message.
 */
import http from 'node:http';
import https from 'node:https';
import type { Json } from '../json/json.js';
import type { Endpoint } from './endpoint.js';
import { isTransient, RemoteError } from './replication-errors.js';

export interface ClientSettings {
  connectionTimeoutMs: number;
  retries: number;
  httpConnections: number;
  userAgent: string;
}

export interface RemoteResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface RequestOptions {
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
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
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

  /** A request relative to the database URL (`''` is the database itself), retried while transient. */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<RemoteResponse> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#authenticated(method, path, options);
      } catch (error) {
        if (!isTransient(error) || attempt >= this.#settings.retries || this.#signal?.aborted) throw error;
        await sleep(Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** attempt), this.#signal);
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

  #send(method: string, url: URL, options: RequestOptions, withIdentity = true): Promise<RemoteResponse> {
    const body = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = transport.request(url, { method, agent: this.#agent, headers: this.#headers(options, withIdentity), signal: this.#signal }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
        response.on('error', (error) => reject(new RemoteError(0, 'network_error', error.message)));
      });
      request.setTimeout(options.timeoutMs ?? this.#settings.connectionTimeoutMs, () => request.destroy(new Error('request timed out')));
      request.on('error', (error) => reject(new RemoteError(0, 'network_error', `${error.message} (${method} ${this.endpoint.url})`)));
      request.end(body);
    });
  }
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
