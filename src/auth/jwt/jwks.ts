/**
 * Keys published by an identity provider as a JSON Web Key Set (`[jwt_auth] jwks_url`), a Divan
 * extension: CouchDB only knows `[jwt_keys]`. Keys are fetched on first need and cached. An unknown
 * `kid` triggers a refresh, at most once per `jwks_refresh_interval`, so a key rotation is picked
 * up without letting random kids hammer the provider. After `jwks_cache_ttl` a refresh runs in
 * the background while the cached keys keep answering, and a provider that is down never fails a
 * request whose key is cached. Only asymmetric keys are accepted: a JWKS is public, so an `oct`
 * (HMAC) key in it would let anybody sign tokens.
 *
 * @module
 */
import type { Logger } from '../../log/logger.js';
import type { JwtAlgorithm, KeyKind } from './algorithms.js';
import { isObject, type JwksKey, parseJwks } from './jwk.js';
import type { VerificationKey } from './verification-key.js';

const JWKS_FETCH_TIMEOUT_MS = 5000;
/** A key set is a few KiB; anything far larger is not one. */
const JWKS_MAX_BYTES = 1024 * 1024;

export interface JwksOptions {
  urls: readonly string[];
  /** Minimum time between two fetches of one URL caused by unknown kids (or a stale cache). */
  refreshIntervalMs: number;
  /** Age after which a successful fetch is refreshed in the background. */
  cacheTtlMs: number;
  log: Logger;
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Milliseconds since the epoch. */
  now?: () => number;
  /** Called when a refresh removed or replaced a key, so results verified with it can be dropped. */
  onKeysChanged?: () => void;
}

interface Source {
  url: string;
  keys: JwksKey[];
  loadedAtMs: number | undefined;
  attemptedAtMs: number | undefined;
  inflight: Promise<void> | undefined;
  failing: boolean;
}

export class JwksStore {
  readonly #sources: Source[];
  readonly #refreshIntervalMs: number;
  readonly #cacheTtlMs: number;
  readonly #timeoutMs: number;
  readonly #log: Logger;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #onKeysChanged: (() => void) | undefined;

  constructor(options: JwksOptions) {
    this.#sources = options.urls.map((url) => ({
      url,
      keys: [],
      loadedAtMs: undefined,
      attemptedAtMs: undefined,
      inflight: undefined,
      failing: false,
    }));
    this.#refreshIntervalMs = options.refreshIntervalMs;
    this.#cacheTtlMs = options.cacheTtlMs;
    this.#timeoutMs = options.timeoutMs ?? JWKS_FETCH_TIMEOUT_MS;
    this.#log = options.log;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#now = options.now ?? Date.now;
    this.#onKeysChanged = options.onKeysChanged;
  }

  /**
   * The key with this `kid` that may verify `alg` (its kind is `alg`'s family, and its own `alg`,
   * when it has one, is `alg`), fetching the set when the kid is not cached and the refresh
   * interval allows. `undefined` when no source has it.
   */
  async find(kind: KeyKind, kid: string, alg: JwtAlgorithm): Promise<VerificationKey | undefined> {
    if (kind === 'hmac') return undefined;
    const now = this.#now();
    const cached = this.#match(kind, kid, alg);
    if (cached !== undefined) {
      this.#refreshStale(now);
      return cached;
    }
    const pending: Promise<void>[] = [];
    for (const source of this.#sources) {
      if (source.inflight !== undefined) pending.push(source.inflight);
      else if (this.#mayFetch(source, now)) pending.push(this.#refresh(source));
    }
    if (pending.length === 0) return undefined;
    await Promise.all(pending);
    return this.#match(kind, kid, alg);
  }

  /** Resolves once no fetch is under way (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.#sources.some((source) => source.inflight !== undefined)) {
      await Promise.all(this.#sources.map((source) => source.inflight));
    }
  }

  #match(kind: KeyKind, kid: string, alg: JwtAlgorithm): VerificationKey | undefined {
    const candidates: VerificationKey[] = [];
    for (const source of this.#sources) {
      for (const entry of source.keys) {
        if (entry.kid === kid && entry.kind === kind && (entry.alg === undefined || entry.alg === alg)) {
          candidates.push(entry.key);
        }
      }
    }
    return candidates.find((key) => key.supports(alg)) ?? candidates[0];
  }

  #mayFetch(source: Source, now: number): boolean {
    return source.attemptedAtMs === undefined || now - source.attemptedAtMs >= this.#refreshIntervalMs;
  }

  #refreshStale(now: number): void {
    for (const source of this.#sources) {
      if (source.inflight !== undefined || source.loadedAtMs === undefined) continue;
      if (now - source.loadedAtMs >= this.#cacheTtlMs && this.#mayFetch(source, now)) void this.#refresh(source);
    }
  }

  /** Fetches one source; never rejects: on failure the cached keys stay. */
  #refresh(source: Source): Promise<void> {
    source.attemptedAtMs = this.#now();
    const run = (async () => {
      try {
        const body = await fetchJson(this.#fetch, source.url, this.#timeoutMs);
        const parsed = parseJwks(body);
        if (parsed === undefined) throw new Error('the response is not a JSON Web Key Set');
        if (parsed.skipped.length > 0) {
          this.#log.warning(`jwt: JWKS ${describeUrl(source.url)}: ignored keys: ${parsed.skipped.join('; ')}`);
        }
        const kept = new Set(parsed.keys.map((entry) => entry.fingerprint));
        const lostKey = source.keys.some((entry) => !kept.has(entry.fingerprint));
        source.keys = parsed.keys;
        source.loadedAtMs = this.#now();
        if (source.failing) this.#log.notice(`jwt: JWKS ${describeUrl(source.url)} answers again`);
        source.failing = false;
        if (lostKey) this.#onKeysChanged?.();
      } catch (error) {
        // Logged once per outage, not once per attempt; the message names the URL, never a key.
        if (!source.failing) {
          this.#log.warning(
            `jwt: cannot fetch JWKS ${describeUrl(source.url)} (${describeError(error)}); ` +
              `serving ${source.keys.length} cached key(s)`,
          );
        }
        source.failing = true;
      } finally {
        source.inflight = undefined;
      }
    })();
    source.inflight = run;
    return run;
  }
}

/**
 * The URLs of `[jwt_auth] jwks_url`: comma-separated, `http:` or `https:` only. Problems are
 * returned for the log; the URLs that parse are still used.
 */
export function parseJwksUrls(value: string | undefined): { urls: string[]; problems: string[] } {
  const urls: string[] = [];
  const problems: string[] = [];
  for (const raw of (value ?? '').split(',')) {
    const text = raw.trim();
    if (text === '') continue;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      problems.push(`"${text}" is not a URL`);
      continue;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      problems.push(`${describeUrl(text)} is neither http nor https`);
      continue;
    }
    if (url.username !== '' || url.password !== '') {
      problems.push(`${describeUrl(text)} carries credentials in the URL, which fetch refuses`);
      continue;
    }
    if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
      problems.push(`${describeUrl(text)} uses plain http: anyone on the path can substitute keys`);
    }
    if (!urls.includes(url.href)) urls.push(url.href);
  }
  return { urls, problems };
}

async function fetchJson(fetcher: typeof fetch, url: string, timeoutMs: number): Promise<unknown> {
  // A timer of our own, not AbortSignal.timeout: that one is unref'd and weakly held, so a fetch to
  // a provider that never answers must not depend on it to ever end.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('timed out', 'TimeoutError')), timeoutMs);
  try {
    const response = await fetcher(url, {
      headers: { accept: 'application/jwk-set+json, application/json' },
      signal: controller.signal,
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(`HTTP ${response.status}`);
    }
    return JSON.parse(await readLimited(response, JWKS_MAX_BYTES));
  } finally {
    clearTimeout(timer);
  }
}

async function readLimited(response: Response, maxBytes: number): Promise<string> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`response larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
}

/** Scheme, host and path only: a URL may carry credentials in its userinfo or query. */
function describeUrl(text: string): string {
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timed out';
  const cause = (error as { cause?: unknown }).cause;
  const code = isObject(cause) && typeof cause.code === 'string' ? ` ${cause.code}` : '';
  // Messages may quote the URL, query string included.
  const message = error.message.replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, (url) => describeUrl(url));
  return `${message}${code}`.replace(/\s+/g, ' ').slice(0, 200);
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}
