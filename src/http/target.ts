/**
 * Splits a request target into decoded path segments (empty segments dropped, as CouchDB) and the
 * query string after `?` (parsed only when an endpoint reads it: most requests carry none).
 * `plusToSpace` is CouchDB's `[chttpd] decode_plus_to_space`: mochiweb's `unquote` reads a `+` in
 * a path segment as a space, so `/db/a+b` names the document `a b` there.
 */
export function parseTarget(target: string, plusToSpace = false): { path: string; segments: string[]; search: string } | undefined {
  let pathAndQuery = target;
  if (!pathAndQuery.startsWith('/')) {
    try {
      const url = new URL(target);
      pathAndQuery = url.pathname + url.search;
    } catch {
      return undefined;
    }
  }
  const queryStart = pathAndQuery.indexOf('?');
  const path = queryStart === -1 ? pathAndQuery : pathAndQuery.slice(0, queryStart);
  const search = queryStart === -1 ? '' : pathAndQuery.slice(queryStart + 1);
  const segments: string[] = [];
  for (const raw of path.split('/')) {
    if (raw === '') continue;
    const spaced = plusToSpace && raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
    try {
      // Most segments hold no escape: decoding them would only copy them.
      segments.push(spaced.includes('%') ? decodeURIComponent(spaced) : spaced);
    } catch {
      return undefined;
    }
  }
  return { path, segments, search };
}

/** Characters CouchDB accepts in a client's `X-Couch-Request-ID` (chttpd's is_valid_nonce_char). */
const REQUEST_ID = /^[0-9A-Za-z_-]{1,36}$/;

/** The client's `X-Couch-Request-ID` when CouchDB would keep it (at most 36 of `[0-9A-Za-z_-]`), else undefined. */
export function clientRequestId(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : undefined;
}

/** The methods `X-HTTP-Method-Override` may name (chttpd's handle_request_int). */
const OVERRIDABLE = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'TRACE', 'CONNECT', 'COPY']);

/**
 * The method a request is handled as: a POST's `X-HTTP-Method-Override` when it names one of
 * CouchDB's methods; any other method keeps its own, as CouchDB ignores the header there.
 */
export function effectiveMethod(method: string, override: string | string[] | undefined): string {
  if (method !== 'POST' || typeof override !== 'string') return method;
  const named = override.split(',', 1)[0]!.trim();
  return OVERRIDABLE.has(named) ? named : method;
}
