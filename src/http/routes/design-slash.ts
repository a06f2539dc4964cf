import { databaseName } from '../document-path.js';
import type { Reply } from '../reply.js';
import type { Request } from '../request.js';
import { absoluteUrl } from '../urls.js';

/**
 * `GET /{db}/_design%2F{name}…`: CouchDB answers 301 to the same path with the slash unescaped
 * (chttpd_db's "special case to enable using an unencoded slash"), query string kept; clients follow it.
 */
export async function designSlashRedirect(request: Request): Promise<Reply> {
  databaseName(request);
  const url = request.raw.url ?? '';
  const search = url.includes('?') ? url.slice(url.indexOf('?')) : '';
  const target = request.path.replace(/_design%2F/i, '_design/') + search;
  return { status: 301, body: Buffer.alloc(0), headers: { Location: absoluteUrl(request, target) } };
}
