/**
 * A replication endpoint as CouchDB 3 reads it (couch_replicator_parse `parse_rep_db`): a URL, or
 * `{url, auth: {basic: {username, password}}, headers}`. Basic credentials may come from
 * `auth.basic`, the URL's userinfo or an `Authorization: Basic` header, picked in that order, and
 * are kept out of the URL and the headers, so no shown URL and no log line ever carries them.
 */
import { isObject } from '../documents/document-json.js';
import type { Json } from '../json/json.js';
import { checkEndpointHeader } from './endpoint-headers.js';
import { ReplicationSpecError } from './replication-errors.js';

interface Credentials {
  username: string;
  password: string;
}

export interface Endpoint {
  /** Without userinfo, ending in `/` unless it has a query (CouchDB's `maybe_add_trailing_slash`). */
  url: string;
  /** The caller's headers, sorted by name, without a Basic `Authorization`. */
  headers: [string, string][];
  basic?: Credentials;
  /** `auth.session`: log in with POST /_session and send the cookie (the default with credentials). */
  session: boolean;
}

function decodeBasicHeader(value: string): Credentials | undefined {
  const match = /^basic (.*)$/i.exec(value);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function credentialsOf(value: Json | undefined): Credentials | undefined {
  if (!isObject(value)) return undefined;
  const { username, password } = value;
  return typeof username === 'string' && typeof password === 'string' ? { username, password } : undefined;
}

function parseUrl(url: string, allowed: readonly string[]): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ReplicationSpecError(400, 'invalid_replication', 'endpoint has an invalid url');
  }
  if (!allowed.includes(parsed.protocol.replace(/:$/, ''))) throw new ReplicationSpecError(400, 'invalid_replication', 'endpoint has an invalid url');
  return parsed;
}

function headersOf(value: Json | undefined): [string, string][] {
  if (value === undefined) return [];
  if (!isObject(value)) throw new ReplicationSpecError(400, 'bad_request', 'headers must be an object');
  const entries = Object.entries(value).map(([name, header]): [string, string] => {
    if (typeof header !== 'string') throw new ReplicationSpecError(400, 'bad_request', 'header values must be strings');
    checkEndpointHeader(name, header);
    return [name, header];
  });
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The endpoint of `source` or `target`; a bare database name is refused, as CouchDB 3 does. */
export function parseEndpoint(spec: Json | undefined, role: 'source' | 'target', protocols: readonly string[]): Endpoint {
  if (spec === undefined || spec === null) throw new ReplicationSpecError(400, 'bad_request', `Missing replicator database`);
  const props = typeof spec === 'string' ? { url: spec } : isObject(spec) ? spec : undefined;
  const url = props?.['url'];
  if (typeof url !== 'string') throw new ReplicationSpecError(400, 'bad_request', `${role} must be a URL or an object with a url`);
  if (!/^https?:\/\//i.test(url) && typeof spec === 'string') throw new ReplicationSpecError(400, 'bad_request', 'local_endpoints_not_supported');
  const parsed = parseUrl(url, protocols);
  const auth = isObject(props!['auth']) ? props!['auth'] : {};
  let headers = headersOf(props!['headers']);
  const fromHeader = headers.find(([name]) => name.toLowerCase() === 'authorization');
  const headerCreds = fromHeader ? decodeBasicHeader(fromHeader[1]) : undefined;
  if (headerCreds) headers = headers.filter((header) => header !== fromHeader);
  const urlCreds = parsed.username !== '' ? { username: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) } : undefined;
  parsed.username = '';
  parsed.password = '';
  let clean = parsed.toString();
  if (!clean.includes('?') && !clean.endsWith('/')) clean += '/';
  const basic = credentialsOf(auth['basic']) ?? credentialsOf(auth['session']) ?? urlCreds ?? headerCreds;
  const session = basic !== undefined && auth['session'] !== false;
  return { url: clean, headers, ...(basic ? { basic } : {}), session };
}

/** The URL as `_scheduler`, `_active_tasks` and logs show it: never with a password. */
export function shownUrl(endpoint: Endpoint): string {
  return endpoint.url;
}
