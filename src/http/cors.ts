import type { IncomingHttpHeaders } from 'node:http';
import type { ConfigChange } from '../config/config.js';
import { DEFAULTS } from '../config/defaults.js';
import type { Logger } from '../log/logger.js';
import type { OutgoingHeaders } from './reply.js';

/**
 * Cross-Origin Resource Sharing as CouchDB's `chttpd_cors.erl` does it: `[chttpd] enable_cors` and
 * the `[cors]` section, preflights answered before authentication, and every other response to an
 * allowed origin carrying Access-Control-Allow-Origin (the origin itself, never `*`),
 * -Allow-Credentials and -Expose-Headers. Divan differs where CouchDB is unsafe (docs/cors.md):
 * `origins = *` never grants credentials, a refused preflight carries no CORS headers, and
 * responses say `Vary: Origin`. Per-vhost `[cors:host]` sections (deprecated with vhosts) are not read.
 */

/** CouchDB's `?SUPPORTED_HEADERS`: request headers a preflight may ask for when `[cors] headers` is unset. */
export const DEFAULT_ALLOWED_HEADERS: readonly string[] = [
  'accept',
  'accept-language',
  'authorization',
  'content-length',
  'content-range',
  'content-type',
  'destination',
  'expires',
  'if-match',
  'last-modified',
  'origin',
  'pragma',
  'x-couch-full-commit',
  'x-couch-id',
  'x-couch-persist',
  'x-couchdb-www-authenticate',
  'x-http-method-override',
  'x-requested-with',
  'x-couchdb-vhost-path',
];

/** CouchDB's `?SUPPORTED_METHODS`: methods a preflight may ask for when `[cors] methods` is unset. */
export const DEFAULT_ALLOWED_METHODS: readonly string[] = ['CONNECT', 'COPY', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'TRACE'];

/** CouchDB's `?COUCH_HEADERS`: exposed after the simple headers when `[cors] exposed_headers` is unset. */
export const DEFAULT_EXPOSED_HEADERS: readonly string[] = [
  'accept-ranges',
  'etag',
  'server',
  'x-couch-request-id',
  'x-couch-update-newrev',
  'x-couchdb-body-time',
];

/** CouchDB's `?SIMPLE_HEADERS`: those present in a response are listed in Access-Control-Expose-Headers. */
const SIMPLE_RESPONSE_HEADERS: ReadonlySet<string> = new Set(['cache-control', 'content-language', 'content-type', 'expires', 'last-modified', 'pragma']);

/** CouchDB's `?CORS_DEFAULT_MAX_AGE`, in seconds. */
const DEFAULT_MAX_AGE = '600';

export interface CorsSettings {
  /** `[chttpd] enable_cors`. */
  readonly enabled: boolean;
  /** `[cors] credentials`. */
  readonly credentials: boolean;
  /** `[cors] origins` holds `*`. */
  readonly anyOrigin: boolean;
  /** The other entries of `[cors] origins`, compared case-sensitively with the Origin header. */
  readonly origins: ReadonlySet<string>;
  /** `[cors] methods`, case-sensitive, in the configured order (Access-Control-Allow-Methods). */
  readonly methods: readonly string[];
  /** `[cors] headers`, lower-cased. */
  readonly headers: ReadonlySet<string>;
  /** `[cors] exposed_headers`, lower-cased. */
  readonly exposedHeaders: readonly string[];
  /** `[cors] max_age`, digits (Access-Control-Max-Age). */
  readonly maxAge: string;
}

/** The part of `Config` CORS reads. */
interface CorsConfigSource {
  get(section: string, key: string): string | undefined;
  getBoolean(section: string, key: string, fallback: boolean): boolean;
}

/** CouchDB's `split_list/1` (`\s*,\s*`), with empty entries dropped. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** A list setting: unset or blank means the default (an empty ini value is CouchDB's deletion marker). */
function listSetting(source: CorsConfigSource, key: string, fallback: readonly string[], lower: boolean): readonly string[] {
  const raw = source.get('cors', key);
  if (raw === undefined || raw.trim() === '') return fallback;
  const items = splitList(raw);
  return lower ? items.map((item) => item.toLowerCase()) : items;
}

/** Settings and what is wrong with them (each warning is logged once per change). */
export function readCorsSettings(source: CorsConfigSource): { settings: CorsSettings; warnings: string[] } {
  const warnings: string[] = [];
  const enabled = source.getBoolean('chttpd', 'enable_cors', DEFAULTS.chttpd.enable_cors);
  const credentials = source.getBoolean('cors', 'credentials', DEFAULTS.cors.credentials);
  const originList = splitList(source.get('cors', 'origins') ?? '');
  const anyOrigin = originList.includes('*');
  const origins = new Set(originList.filter((origin) => origin !== '*'));
  for (const origin of origins) {
    if (origin !== 'null' && !/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/\s]+$/.test(origin)) {
      warnings.push(`[cors] origins: ${JSON.stringify(origin)} is not scheme://host[:port] and matches no browser's Origin`);
    }
  }
  if (anyOrigin && credentials) {
    warnings.push('[cors] origins = * with credentials = true: origins matched only by * get no credentials (listed origins still do)');
  }
  const rawMaxAge = source.get('cors', 'max_age')?.trim();
  let maxAge = DEFAULT_MAX_AGE;
  if (rawMaxAge !== undefined && rawMaxAge !== '') {
    if (/^\d{1,10}$/.test(rawMaxAge)) maxAge = String(Number(rawMaxAge));
    else warnings.push(`[cors] max_age is not a number of seconds; ${DEFAULT_MAX_AGE} is used`);
  }
  const settings: CorsSettings = {
    enabled,
    credentials,
    anyOrigin,
    origins,
    methods: listSetting(source, 'methods', DEFAULT_ALLOWED_METHODS, false),
    headers: new Set(listSetting(source, 'headers', DEFAULT_ALLOWED_HEADERS, true)),
    exposedHeaders: listSetting(source, 'exposed_headers', DEFAULT_EXPOSED_HEADERS, true),
    maxAge,
  };
  return { settings, warnings };
}

/** True for a config change that CORS depends on. */
export function affectsCors(change: Pick<ConfigChange, 'section' | 'key'>): boolean {
  return change.section === 'cors' || (change.section === 'chttpd' && change.key === 'enable_cors');
}

/** What an allowed origin is given. */
export interface CorsGrant {
  origin: string;
  credentials: boolean;
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The grant for a request's Origin, or undefined (CORS off, no Origin, origin not allowed). The
 * match is exact and case-sensitive, as CouchDB's. An Origin holding several values (a comma or
 * whitespace, e.g. two Origin headers) is refused rather than echoed. Credentials go to listed
 * origins only: CouchDB also gives them to any origin when `origins = *`, which lets every web
 * site act as the signed-in user.
 */
export function grantFor(settings: CorsSettings, origin: string | undefined): CorsGrant | undefined {
  if (!settings.enabled || origin === undefined || origin === '' || /[\s,]/.test(origin)) return undefined;
  const listed = settings.origins.has(origin);
  if (!listed && !settings.anyOrigin) return undefined;
  return { origin, credentials: settings.credentials && listed };
}

type Preflight =
  /** Not a CORS preflight (or CORS is off, or the origin is not allowed): the normal pipeline. */
  | { kind: 'none' }
  /** A preflight from an allowed origin for a method or header not allowed: the normal pipeline, no CORS headers. */
  | { kind: 'refused' }
  /** A preflight to answer at once, before authentication: 204 with these headers. */
  | { kind: 'answer'; headers: Record<string, string> };

/**
 * CouchDB's `maybe_handle_preflight_request/1`: an OPTIONS with an allowed Origin and an
 * Access-Control-Request-Method in `[cors] methods` whose Access-Control-Request-Headers are all in
 * `[cors] headers`. Access-Control-Allow-Headers repeats the requested headers as sent.
 */
export function preflight(settings: CorsSettings, method: string, headers: IncomingHttpHeaders): Preflight {
  if (!settings.enabled || method !== 'OPTIONS') return { kind: 'none' };
  const grant = grantFor(settings, headerValue(headers, 'origin'));
  if (grant === undefined) return { kind: 'none' };
  const requestMethod = headerValue(headers, 'access-control-request-method');
  if (requestMethod === undefined) return { kind: 'none' };
  if (!settings.methods.includes(requestMethod)) return { kind: 'refused' };
  const requestHeaders = headerValue(headers, 'access-control-request-headers') ?? '';
  if (splitList(requestHeaders).some((name) => !settings.headers.has(name.toLowerCase()))) return { kind: 'refused' };
  const answer: Record<string, string> = {
    'Access-Control-Allow-Origin': grant.origin,
    'Access-Control-Max-Age': settings.maxAge,
    'Access-Control-Allow-Methods': settings.methods.join(', '),
  };
  if (grant.credentials) answer['Access-Control-Allow-Credentials'] = 'true';
  answer['Access-Control-Allow-Headers'] = requestHeaders;
  answer['Vary'] = 'Origin';
  return { kind: 'answer', headers: answer };
}

/**
 * CouchDB's `chttpd_cors:headers/2` on a response about to be written: for an allowed origin,
 * Access-Control-Allow-Origin, -Allow-Credentials and -Expose-Headers ("content-type", the other
 * simple headers the response has, then `[cors] exposed_headers`). With CORS on, every response
 * also says `Vary: Origin` (CouchDB does not), since it depends on the Origin header.
 */
export function addCorsHeaders(settings: CorsSettings, grant: CorsGrant | undefined, headers: OutgoingHeaders): void {
  if (!settings.enabled) return;
  addVary(headers, 'Origin');
  if (grant === undefined) return;
  const simple = Object.keys(headers)
    .map((name) => name.toLowerCase())
    .filter((name) => name !== 'content-type' && SIMPLE_RESPONSE_HEADERS.has(name));
  const exposed = [...new Set(['content-type', ...simple, ...settings.exposedHeaders])];
  headers['Access-Control-Allow-Origin'] = grant.origin;
  if (grant.credentials) headers['Access-Control-Allow-Credentials'] = 'true';
  headers['Access-Control-Expose-Headers'] = exposed.join(', ');
}

/** Adds a token to the Vary header (whatever its case), unless it is there already or Vary is `*`. */
export function addVary(headers: OutgoingHeaders, token: string): void {
  const name = Object.keys(headers).find((key) => key.toLowerCase() === 'vary');
  if (name === undefined) {
    headers['Vary'] = token;
    return;
  }
  const current = [headers[name]!].flat().join(', ');
  const tokens = splitList(current).map((item) => item.toLowerCase());
  if (tokens.includes('*') || tokens.includes(token.toLowerCase())) return;
  headers[name] = current.trim() === '' ? token : `${current}, ${token}`;
}

/** The live CORS settings: parsed at start and again on each change to `[cors]` or `enable_cors`. */
export class Cors {
  #settings: CorsSettings;
  readonly #source: CorsConfigSource;
  readonly #log: Logger;

  constructor(source: CorsConfigSource & { onChange(listener: (change: ConfigChange) => void): () => void }, log: Logger) {
    this.#source = source;
    this.#log = log;
    this.#settings = this.#load();
    source.onChange((change) => {
      if (affectsCors(change)) this.#settings = this.#load();
    });
  }

  get settings(): CorsSettings {
    return this.#settings;
  }

  #load(): CorsSettings {
    const { settings, warnings } = readCorsSettings(this.#source);
    if (settings.enabled) for (const warning of warnings) this.#log.warning(`cors: ${warning}`);
    return settings;
  }
}
