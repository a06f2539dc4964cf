import type { Config } from '../config/config.js';
import { isCouchError } from '../errors/couch-error.js';
import { unknownError } from '../errors/catalog.js';
import type { Logger } from '../log/logger.js';
import { json, type Reply } from './reply.js';
import { absoluteUrl } from './urls.js';
import type { Request } from './request.js';

/**
 * The one place that turns a thrown value into a response. CouchErrors keep their status, body and
 * headers; anything else is a bug: logged once (without request data) and answered as a bare 500.
 */
export function errorReply(error: unknown, request: Request | undefined, config: Config, log: Logger): Reply {
  if (!isCouchError(error)) {
    log.error(`unexpected error${request ? ` on ${request.method} ${request.path}` : ''}: ${(error as Error)?.stack ?? String(error)}`);
    const failure = unknownError();
    return json(failure.status, failure.toJSON());
  }
  const headers: Record<string, string> = { ...error.headers };
  let status = error.status;
  if (error.status === 401 && request) {
    const challenge = wwwAuthenticate(request, config, error.error);
    if (challenge) headers['WWW-Authenticate'] = challenge;
    else if (error.error === 'unauthorized' && prefersHtml(request.header('accept'))) {
      // A browser is sent to the login page, which brings it back afterwards.
      status = 302;
      const page = config.authString('authentication_redirect');
      const separator = page.includes('?') ? '&' : '?';
      headers['Location'] = absoluteUrl(request, `${page}${separator}return=${couchEncode(request.raw.url ?? '/')}&reason=${couchEncode(error.reason)}`);
    }
  }
  if (error.status === 413) headers['Connection'] = 'close';
  return json(status, error.toJSON(), headers);
}

/** CouchDB's encoding for the redirect query: keeps a-z A-Z 0-9 _ . - :, %XX (uppercase) for the rest. */
export function couchEncode(text: string): string {
  return Array.from(Buffer.from(text, 'utf8'))
    .map((byte) => (/[A-Za-z0-9_.\-:]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

/**
 * True when the Accept header ranks text/html above JSON, as a browser's does
 * (`text/html,…,*\/*;q=0.8`). API clients (JSON, `*\/*` alone, no Accept) get the 401 itself.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let html = 0;
  let jsonQuality = 0;
  for (const part of accept.split(',')) {
    const [rawType, ...params] = part.split(';');
    const type = rawType!.trim().toLowerCase();
    const qParam = params.map((param) => param.trim()).find((param) => param.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === 'text/html' || type === 'text/*') html = Math.max(html, q);
    if (type === 'application/json' || type === 'application/*') jsonQuality = Math.max(jsonQuality, q);
    if (type === '*/*') {
      html = Math.max(html, q);
      jsonQuality = Math.max(jsonQuality, q);
    }
  }
  return html > jsonQuality;
}

/** CouchDB's decision order for a challenge on a 401 (docs/authentication.md, "401s and browsers"). */
function wwwAuthenticate(request: Request, config: Config, errorName: string): string | undefined {
  const requested = request.header('x-couchdb-www-authenticate');
  if (requested !== undefined) return requested;
  const configured = config.get('chttpd', 'WWW-Authenticate') ?? config.get('httpd', 'WWW-Authenticate');
  if (configured !== undefined) return configured;
  if (errorName === 'unauthorized' && config.getBoolean('chttpd', 'require_valid_user')) return 'Basic realm="server"';
  return undefined;
}
