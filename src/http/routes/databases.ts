import { requireDbAdmin, requireServerAdmin } from '../../identity/authorization.js';
import { isValidDatabaseName } from '../../databases/names.js';
import { defaultSecurity, validateSecurity } from '../../databases/security.js';
import { badRequest, databaseExists, databaseMissing, forbidden, illegalDatabaseName, methodNotAllowed } from '../../errors/catalog.js';
import { DEFAULT_DOCUMENT_LIMITS, type DocumentLimits } from '../../storage/storage.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';
import { absoluteUrl } from '../urls.js';
import { openAsMember, securityOf } from './database-access.js';
import { createDocumentByPost } from './documents.js';
import { formatSeq } from './sequences.js';

export function databaseName(request: Request): string {
  const name = request.segments[0]!;
  if (!isValidDatabaseName(name)) throw illegalDatabaseName(name);
  return name;
}

/** `/{db}`: create and delete by server admins, info for members, POST a document. */
export async function database(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  switch (request.method) {
    case 'PUT': {
      requireServerAdmin(request.userCtx);
      const security = defaultSecurity(services.config.getString('couchdb', 'default_security', 'admin_only'));
      if (!(await services.storage.createDatabase(db, security))) throw databaseExists();
      return json(201, { ok: true }, { Location: absoluteUrl(request, `/${encodeURIComponent(db)}`) });
    }
    case 'DELETE': {
      requireServerAdmin(request.userCtx);
      if (request.query.has('rev')) {
        throw badRequest('You tried to DELETE a database with a ?rev= parameter. Did you mean to DELETE a document instead?');
      }
      if (!(await services.storage.deleteDatabase(db))) throw databaseMissing();
      return json(200, { ok: true });
    }
    case 'GET':
    case 'HEAD': {
      await openAsMember(services.storage, db, request.userCtx);
      const info = await services.storage.databaseInfo(db);
      if (!info) throw databaseMissing();
      return json(200, {
        instance_start_time: info.instanceStartTime,
        db_name: info.name,
        purge_seq: '0',
        update_seq: formatSeq(info.updateSeq),
        sizes: { file: info.dataSize, external: info.dataSize, active: info.dataSize },
        props: {},
        doc_del_count: info.deletedDocCount,
        doc_count: info.docCount,
        disk_format_version: 8,
        compact_running: false,
        cluster: { q: 1, n: 1, w: 1, r: 1 },
      });
    }
    case 'POST':
      return createDocumentByPost(request, services, db);
    default:
      throw methodNotAllowed(['DELETE', 'GET', 'HEAD', 'POST', 'PUT']);
  }
}

/** `/{db}/_security`: members read it, db admins replace it. */
export async function security(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  switch (request.method) {
    case 'GET':
    case 'HEAD':
      return json(200, await openAsMember(services.storage, db, request.userCtx));
    case 'PUT': {
      const current = await securityOf(services.storage, db);
      requireDbAdmin(request.userCtx, current);
      if (db === usersDbName(services) && services.config.getString('couchdb', 'users_db_security_editable', 'false') === 'false') {
        throw forbidden("You can't edit the security object of the user database.");
      }
      const next = validateSecurity(await request.json(maxDocumentSize(services)));
      if (!(await services.storage.putSecurity(db, next))) throw databaseMissing();
      return json(200, { ok: true });
    }
    default:
      throw methodNotAllowed(['GET', 'PUT']);
  }
}

export function usersDbName(services: Services): string {
  return services.config.authString('authentication_db', '_users');
}

export function maxDocumentSize(services: Services): number {
  return services.config.getInteger('couchdb', 'max_document_size', 8000000);
}

/** `[couchdb] max_document_leaves` and `max_document_revisions`: how large replication may make a document. */
export function documentLimits(services: Services): DocumentLimits {
  const { maxLeaves, maxRevisions } = DEFAULT_DOCUMENT_LIMITS;
  return {
    maxLeaves: Math.max(1, services.config.getInteger('couchdb', 'max_document_leaves', maxLeaves)),
    maxRevisions: Math.max(1, services.config.getInteger('couchdb', 'max_document_revisions', maxRevisions)),
  };
}
