import { requireServerAdmin } from '../../identity/authorization.js';
import { badRequest, configSectionBlocked, methodNotAllowed, notFound, unknownConfigValue } from '../../errors/catalog.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/**
 * Sections CouchDB never lets the HTTP API change (`couch_util:check_config_blacklist`): in CouchDB
 * they name code to run. Divan has no such settings, but a client that writes them expects CouchDB's 403.
 */
const BLOCKED_SECTIONS = new Set([
  'daemons',
  'external',
  'httpd_design_handlers',
  'httpd_db_handlers',
  'httpd_global_handlers',
  'native_query_servers',
  'os_daemons',
  'query_servers',
  'feature_flags',
]);

/**
 * `/_node/{node}/_config[/{section}[/{key}]]`: server admins only; values travel as JSON strings
 * and a PUT or DELETE answers the previous value.
 */
export async function nodeConfig(request: Request, services: Services): Promise<Reply> {
  requireServerAdmin(request.userCtx);
  const [, node, , section, key, ...rest] = request.segments as string[];
  if (node !== '_local' && node !== services.nodeName()) throw notFound(`no such node: ${node}`);
  if (rest.length > 0) throw notFound('missing');
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  if (section === undefined) {
    if (method !== 'GET') throw methodNotAllowed(['GET']);
    return json(200, services.config.all());
  }
  if (section === '_reload' && key === undefined) return reload(method, services);
  if (key === undefined) {
    if (method !== 'GET') throw methodNotAllowed(['GET']);
    return json(200, services.config.section(section));
  }
  const current = services.config.get(section, key);
  if ((method === 'PUT' || method === 'DELETE') && BLOCKED_SECTIONS.has(section)) throw configSectionBlocked();
  switch (method) {
    case 'GET':
      if (current === undefined) throw unknownConfigValue();
      return json(200, current);
    case 'PUT': {
      const body = await request.json();
      if (typeof body !== 'string') throw badRequest('a JSON string expected');
      const value = body.trim();
      // Stored even when Divan cannot use it (an unparseable authentication_handlers), as CouchDB
      // stores it, so a client's run of changes is never left half-applied; the running server
      // keeps what works (wiring/identity.ts keeps the previous chain and logs why).
      await services.config.set(section, key, value, { persist: request.header('x-couch-persist') !== 'false' });
      return json(200, current ?? '');
    }
    case 'DELETE':
      if (current === undefined) throw unknownConfigValue();
      await services.config.delete(section, key, { persist: request.header('x-couch-persist') !== 'false' });
      return json(200, current);
    default:
      throw methodNotAllowed(['GET', 'PUT', 'DELETE']);
  }
}

/** `POST /_node/{node}/_config/_reload`: every ini file read again (values set with `X-Couch-Persist: false` are forgotten). */
async function reload(method: string, services: Services): Promise<Reply> {
  if (method !== 'POST') throw methodNotAllowed(['POST']);
  try {
    await services.config.reload();
  } catch (error) {
    // Nothing is applied until every file has been read: the running values stay.
    throw badRequest((error as Error).message);
  }
  return json(200, { ok: true });
}
