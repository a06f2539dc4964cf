import type { Request } from './request.js';

/**
 * An absolute URL on this server for a `Location` header: the Host header when present (CouchDB
 * does the same), else the address the request came in on.
 */
export function absoluteUrl(request: Request, path: string): string {
  const scheme = request.secure ? 'https' : 'http';
  const host = request.header('host') ?? `${request.raw.socket.localAddress}:${request.raw.socket.localPort}`;
  return `${scheme}://${host}${path}`;
}

/** Encodes a document id for a URL path, keeping the `/` of `_design/` and `_local/` ids. */
export function documentPath(db: string, id: string): string {
  const encodedId = id.startsWith('_design/') || id.startsWith('_local/')
    ? `${id.slice(0, id.indexOf('/'))}/${encodeURIComponent(id.slice(id.indexOf('/') + 1))}`
    : encodeURIComponent(id);
  return `/${encodeURIComponent(db)}/${encodedId}`;
}
