/**
 * `POST /_replicate` with a database name as `source` or `target` (`{"source":"a","target":"b"}`),
 * as CouchDB 1 and PouchDB Server accepted: Divan's addition, since CouchDB 3 refuses it. The name
 * becomes a URL of this very server (the address the request came in on), sent the caller's own
 * credentials: the replicator then reads and writes with exactly the caller's rights, checked by the
 * ordinary HTTP path, and never with the server's.
 */
import type { Json, JsonObject } from '../json/json.js';

/** How the caller proved who they are, to present again on the loopback requests. */
export interface CallerIdentity {
  /** `http://127.0.0.1:5984/`: where this server took the request. */
  base: string;
  /** The caller's identity headers (`Authorization`, the `AuthSession` cookie, proxy headers). */
  headers: Record<string, string>;
}

/** A database name: no scheme, so not a URL CouchDB 3 would dial. */
const isLocalName = (value: Json | undefined): value is string => typeof value === 'string' && !/^[a-z][a-z0-9+.-]*:/i.test(value);

/** The body with each database name replaced by this server's URL of it, carrying the caller's identity. */
export function withLocalEndpoints(body: JsonObject, caller: CallerIdentity): JsonObject {
  const endpoint = (name: string): JsonObject => ({ url: new URL(encodeURIComponent(name), caller.base).href, headers: { ...caller.headers } });
  const source = body['source'];
  const target = body['target'];
  if (!isLocalName(source) && !isLocalName(target)) return body;
  return { ...body, ...(isLocalName(source) ? { source: endpoint(source) } : {}), ...(isLocalName(target) ? { target: endpoint(target) } : {}) };
}
