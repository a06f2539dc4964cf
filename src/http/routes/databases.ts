import { isAccessDb } from '../../databases/document-access.js';
import { requireServerAdmin } from '../../identity/authorization.js';
import { maxDocumentSize } from '../../databases/settings.js';
import { badRequest, databaseMissing, methodNotAllowed } from '../../errors/catalog.js';
import { databaseInfoBody } from '../database-info.js';
import { partitionedOption, propsOf } from '../../databases/partitions.js';
import { databaseName } from '../document-path.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';
import { absoluteUrl, couchUrlEncode } from '../urls.js';

/** `/{db}`: create and delete by server admins, info for members (POST a document: documents.ts). */
export async function database(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  switch (request.method) {
    case 'PUT':
      requireServerAdmin(request.userCtx);
      await services.databases.create(db, request.userCtx, {
        partitioned: partitionedOption(db, request.query.get('partitioned'), services.config.getString('couchdb', 'users_db_suffix')),
        access: request.query.get('access') === 'true',
      });
      return json(201, { ok: true }, { Location: absoluteUrl(request, `/${couchUrlEncode(db)}`) });
    case 'DELETE':
      requireServerAdmin(request.userCtx);
      if (request.query.has('rev')) {
        throw badRequest('You tried to DELETE a database with a ?rev= parameter. Did you mean to DELETE a document instead?');
      }
      await services.databases.delete(db, request.userCtx);
      return json(200, { ok: true });
    case 'GET':
    case 'HEAD': {
      const opened = await services.databases.openScoped(db, request.userCtx);
      const info = await opened.info({ sizes: true });
      if (!info) throw databaseMissing();
      const props = { ...propsOf(opened.security), ...(isAccessDb(opened.security) ? { access: true } : {}) };
      return json(200, databaseInfoBody(info, services.databases.compactionRunning(db), props));
    }
    default:
      throw methodNotAllowed(['DELETE', 'GET', 'HEAD', 'POST', 'PUT']);
  }
}

/**
 * `POST /{db}/_compact`: a database admin starts reclaiming the bodies of superseded revisions;
 * answered at once, as CouchDB, while the compaction runs (`compact_running` in `GET /{db}`).
 */
export async function compact(request: Request, services: Services): Promise<Reply> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  await services.databases.compact(databaseName(request), request.userCtx);
  await request.discardBody();
  return json(202, { ok: true });
}

/** `/{db}/_security`: members read it, db admins replace it. */
export async function security(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  switch (request.method) {
    case 'GET':
    case 'HEAD':
      return json(200, await services.databases.readSecurity(db, request.userCtx));
    case 'PUT':
      await services.databases.replaceSecurity(db, request.userCtx, () => request.json(maxDocumentSize(services.config)));
      return json(200, { ok: true });
    default:
      throw methodNotAllowed(['GET', 'PUT']);
  }
}
