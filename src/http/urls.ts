import type { Request } from './request.js';

/**
 * The origin of this server as the client sees it, for `Location` headers: the Host header (as
 * CouchDB), `X-Forwarded-Host`/`-Proto`/`-Ssl` only from a trusted proxy (CouchDB believes them from
 * anyone), else the address the request came in on.
 */
function origin(request: Request): string {
  const forwarded = request.viaTrustedProxy;
  const forwardedProto = forwarded ? request.header('x-forwarded-proto') : undefined;
  const forwardedSsl = forwarded ? request.header('x-forwarded-ssl') : undefined;
  const scheme = request.secure || forwardedProto === 'https' || forwardedSsl === 'on' ? 'https' : 'http';
  const forwardedHost = forwarded ? request.header('x-forwarded-host') : undefined;
  const host = safeHost(forwardedHost) ?? safeHost(request.header('host')) ?? `${request.raw.socket.localAddress}:${request.raw.socket.localPort}`;
  return `${scheme}://${host}`;
}

/** A host header value that cannot smuggle a path, credentials or a header break into a URL. */
function safeHost(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const host = value.split(',')[0]!.trim();
  // A name or an IPv4 address, or a bracketed IPv6 address, then an optional port: a stray `[`,
  // `]` or `:` would make the Location an invalid URL.
  return /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(host) ? host : undefined;
}

/** The host (and port) of this server as the client addressed it: what a same-site `Referer` names. */
export function requestHost(request: Request): string {
  return new URL(origin(request)).host;
}

export function absoluteUrl(request: Request, path: string): string {
  return `${origin(request)}${path}`;
}

/**
 * CouchDB's `couch_util:url_encode`, used for its `Location` headers: letters, digits and `_ . - :`
 * as they are, every other byte as `%XX` (so `org.couchdb.user:bob` keeps its colon).
 */
export function couchUrlEncode(text: string): string {
  return encodeURIComponent(text)
    .replaceAll('%3A', ':')
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Encodes a document id for a URL path, keeping the `/` of `_design/` and `_local/` ids. */
export function documentPath(db: string, id: string): string {
  const encodedId = id.startsWith('_design/') || id.startsWith('_local/')
    ? `${id.slice(0, id.indexOf('/'))}/${couchUrlEncode(id.slice(id.indexOf('/') + 1))}`
    : couchUrlEncode(id);
  return `/${couchUrlEncode(db)}/${encodedId}`;
}
