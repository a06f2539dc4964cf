import { getHashes } from 'node:crypto';
import { resourceUsage } from 'node:process';
import { isServerAdmin } from '../../identity/authorization.js';
import type { UserCtx } from '../../identity/user-ctx.js';
import { notAMetricsReader } from '../../errors/catalog.js';
import { subtree } from '../../metrics/stats-tree.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/** CouchDB's `require_metrics`: server admins and users with the `_metrics` role read node metrics. */
export function requireMetricsReader(userCtx: UserCtx): void {
  if (!isServerAdmin(userCtx) && !userCtx.roles.includes('_metrics')) throw notAMetricsReader();
}

/** `GET /_node/{node}/_stats[/{path}…]`: the tree, or the part of it a path names (`null` when none). */
export async function nodeStats(request: Request, services: Services): Promise<Reply> {
  requireMetricsReader(request.userCtx);
  const tree = await services.metrics.stats();
  const found = subtree(tree, request.segments.slice(3));
  return json(200, found === undefined ? null : found);
}

/** `GET /_node/{node}/_prometheus`: the text exposition format. */
export async function nodePrometheus(request: Request, services: Services): Promise<Reply> {
  requireMetricsReader(request.userCtx);
  const text = await services.metrics.prometheus();
  return { status: 200, body: Buffer.from(text, 'utf8'), headers: { 'Content-Type': services.metrics.contentType } };
}

/**
 * `GET /_node/{node}/_system`: CouchDB's shape, filled from Node's process where a value has a
 * meaning here (memory, uptime, context switches, I/O); Erlang-only counters are 0.
 */
export async function nodeSystem(request: Request, services: Services): Promise<Reply> {
  requireMetricsReader(request.userCtx);
  const memory = process.memoryUsage();
  const usage = resourceUsage();
  return json(200, {
    uptime: services.metrics.uptimeSeconds(),
    memory: {
      other: Math.max(0, memory.rss - memory.heapTotal - memory.external),
      atom: 0,
      atom_used: 0,
      processes: memory.heapTotal,
      processes_used: memory.heapUsed,
      binary: memory.arrayBuffers,
      code: Math.max(0, memory.external - memory.arrayBuffers),
      ets: 0,
    },
    run_queue: 0,
    run_queue_dirty_cpu: 0,
    ets_table_count: 0,
    context_switches: usage.voluntaryContextSwitches + usage.involuntaryContextSwitches,
    reductions: 0,
    garbage_collection_count: 0,
    words_reclaimed: 0,
    io_input: usage.fsRead,
    io_output: usage.fsWrite,
    os_proc_count: 0,
    stale_proc_count: 0,
    process_count: 1,
    process_limit: 1,
    message_queues: {},
    internal_replication_jobs: 0,
    distribution: {},
    node: { rss: memory.rss, heap_total: memory.heapTotal, heap_used: memory.heapUsed, external: memory.external, user_cpu_us: usage.userCPUTime, system_cpu_us: usage.systemCPUTime },
  });
}

/** `GET /_node/{node}/_versions`: the runtime and what it supports, in CouchDB's shape (server admins). */
export async function nodeVersions(_request: Request, services: Services): Promise<Reply> {
  return json(200, {
    node: { version: process.versions.node, supported_hashes: getHashes() },
    divan: { version: services.version, storage: services.config.getString('divan', 'storage') },
    collation_driver: { name: 'divan', unicode_version: process.versions.unicode },
  });
}

/** `GET /_node/{node}`: the node's name. */
export async function nodeName(_request: Request, services: Services): Promise<Reply> {
  return json(200, { name: services.nodeName() });
}
