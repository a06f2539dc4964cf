import { requireServerAdmin } from '../../identity/authorization.js';
import { Sequences } from '../../databases/sequences.js';
import { maxDocumentSize } from '../../databases/settings.js';
import { badRequest, databaseMissing, methodNotAllowed } from '../../errors/catalog.js';
import { databaseName } from '../document-path.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';
import { absoluteUrl } from '../urls.js';

/** `/{db}`: create and delete by server admins, info for members (POST a document: documents.ts). */
export async function database(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  switch (request.method) {
    case 'PUT':
      await services.databases.create(db, request.userCtx);
      return json(201, { ok: true }, { Location: absoluteUrl(request, `/${encodeURIComponent(db)}`) });
    case 'DELETE':
      requireServerAdmin(request.userCtx);
      if (request.query.has('rev')) {
        throw badRequest('You tried to DELETE a database with a ?rev= parameter. Did you mean to DELETE a document instead?');
      }
      await services.databases.delete(db, request.userCtx);
      return json(200, { ok: true });
    case 'GET':
    case 'HEAD': {
      const info = await (await services.databases.open(db, request.userCtx)).info();
      if (!info) throw databaseMissing();
      const sequences = new Sequences(info.instanceStartTime);
      return json(200, {
        instance_start_time: info.instanceStartTime,
        db_name: info.name,
        // Divan does not purge: the purge sequence stays 0, in the shape of every other sequence.
        purge_seq: sequences.format(0),
        update_seq: sequences.format(info.updateSeq),
        // `file` also counts the superseded bodies compaction reclaims; the others count leaves.
        sizes: { file: info.dataSize + info.compactableSize, external: info.dataSize, active: info.dataSize },
        props: {},
        doc_del_count: info.deletedDocCount,
        doc_count: info.docCount,
        disk_format_version: 8,
        compact_running: services.databases.compactionRunning(db),
        cluster: { q: 1, n: 1, w: 1, r: 1 },
      });
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
