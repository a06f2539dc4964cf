import type { Config } from '../config/config.js';
import { isCouchError } from '../errors/couch-error.js';
import { unknownError } from '../errors/catalog.js';
import type { Logger } from '../log/logger.js';
import { json, type Reply } from './reply.js';
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
  if (error.status === 401 && request) {
    const challenge = wwwAuthenticate(request, config, error.error);
    if (challenge) headers['WWW-Authenticate'] = challenge;
  }
  if (error.status === 413) headers['Connection'] = 'close';
  return json(error.status, error.toJSON(), headers);
}

/** CouchDB's decision order for a challenge on a 401 (reference §9.2). */
function wwwAuthenticate(request: Request, config: Config, errorName: string): string | undefined {
  const requested = request.header('x-couchdb-www-authenticate');
  if (requested !== undefined) return requested;
  const configured = config.get('chttpd', 'WWW-Authenticate') ?? config.get('httpd', 'WWW-Authenticate');
  if (configured !== undefined) return configured;
  if (errorName === 'unauthorized' && config.getBoolean('chttpd', 'require_valid_user', false)) return 'Basic realm="server"';
  return undefined;
}
