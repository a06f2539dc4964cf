/**
 * A `_replicator` document's endpoints as another user may read them (issue 32 item 11): without
 * `auth`, without `headers`, and with a URL that has no userinfo. The URL is parsed with WHATWG
 * `URL`, the very parser that reads it when the job dials it (parseEndpoint, then `http.request`),
 * so whatever Node would send as credentials is what is removed: `http:/u:p@h`, a leading space,
 * `http:\\u:p@h`, a tab in the scheme and a password holding `@` all parse to a userinfo.
 */
import { isObject } from '../documents/document-json.js';
import type { Json } from '../json/json.js';

/** Fields that may hold a URL with userinfo (the proxy fields are CouchDB's; Divan ignores them). */
export const URL_FIELDS = ['proxy', 'source_proxy', 'target_proxy'] as const;

/**
 * The URL without userinfo; null when it is not an http(s) URL, since such text is never dialled
 * and may still hold a secret that a pattern would miss.
 */
function urlWithoutUserinfo(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  url.username = '';
  url.password = '';
  return url.href;
}

/** An endpoint without its credentials: URL userinfo, `auth` and `headers` removed. */
export function stripCredentials(endpoint: Json | undefined): Json | undefined {
  if (typeof endpoint === 'string') return urlWithoutUserinfo(endpoint);
  if (!isObject(endpoint)) return endpoint;
  const { auth: _auth, headers: _headers, ...rest } = endpoint;
  return rest['url'] === undefined ? rest : { ...rest, url: typeof rest['url'] === 'string' ? urlWithoutUserinfo(rest['url']) : null };
}

/** The proxy fields of a document as another user may read them. */
export function strippedProxies(doc: Readonly<Record<string, Json | undefined>>): Record<string, Json> {
  const shown: Record<string, Json> = {};
  for (const field of URL_FIELDS) {
    const value = doc[field];
    if (value !== undefined) shown[field] = typeof value === 'string' ? urlWithoutUserinfo(value) : null;
  }
  return shown;
}

/** The URL of an endpoint (a URL or `{url, ...}`) as `_scheduler/docs` shows it: without credentials. */
export function shownUrlOf(endpoint: Json | undefined): string | null {
  const url = isObject(endpoint) ? endpoint['url'] : endpoint;
  return typeof url === 'string' ? urlWithoutUserinfo(url) : null;
}
