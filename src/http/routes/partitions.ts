/**
 * `/{db}/_partition/{p}` (chttpd_db's handle_partition_req): a partition's info, and the checks
 * before a partition query is answered as the database-wide one with `partition=p`.
 */
import { partitionStats, requirePartitioned, validatePartition } from '../../databases/partitions.js';
import { badRequest, illegalPartition, methodNotAllowed } from '../../errors/catalog.js';
import { databaseName } from '../document-path.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/** `GET /{db}/_partition/{p}`: the partition's documents and their size, read from one id range. */
export async function partitionInfo(request: Request, services: Services): Promise<Reply> {
  const [, , partition] = request.segments as [string, string, string];
  if (request.method === 'POST' && partition.startsWith('_')) throw illegalPartition('Partition must not start with an underscore');
  if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed(['GET']);
  validatePartition(partition);
  const opened = await services.databases.open(databaseName(request), request.userCtx);
  requirePartitioned(opened);
  const stats = await partitionStats(opened, partition);
  return json(200, {
    db_name: opened.db,
    sizes: { active: stats.dataSize, external: stats.dataSize },
    partition,
    doc_count: stats.docCount,
    doc_del_count: stats.deletedDocCount,
  });
}

/**
 * `/{db}/_partition/{p}/{rest…}`: the database (members only), partitioned, and a partition name
 * CouchDB accepts; the query's own `partition`, if any, must name the same partition. Answers the
 * query the endpoint of `rest` reads.
 */
export async function partitionQuery(request: Request, services: Services): Promise<URLSearchParams> {
  const [, , partition] = request.segments as [string, string, string];
  const opened = await services.databases.open(databaseName(request), request.userCtx);
  requirePartitioned(opened);
  validatePartition(partition);
  const asked = request.query.get('partition');
  if (asked !== null && asked !== partition) throw badRequest('Conflicting value for `partition` in query string');
  const query = new URLSearchParams(request.query);
  query.set('partition', partition);
  return query;
}
