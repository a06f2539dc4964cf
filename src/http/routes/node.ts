import { getHashes } from 'node:crypto';
import { isServerAdmin } from '../../identity/authorization.js';
import type { UserCtx } from '../../identity/user-ctx.js';
import { notAMetricsReader } from '../../errors/catalog.js';
import { nodeMetrics, nodeSystem as gatheredSystem } from '../../cluster/gathered-metrics.js';
import { subtree } from '../../metrics/stats-tree.js';
import type { NodeAnswer, NodeQuestion } from '../../cluster/node-peers.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';

/** CouchDB's `require_metrics`: server admins and users with the `_metrics` role read node metrics. */
export function requireMetricsReader(userCtx: UserCtx): void {
  if (!isServerAdmin(userCtx) && !userCtx.roles.includes('_metrics')) throw notAMetricsReader();
}

/** `GET /_node/{node}/_stats[/{path}…]`: the tree (summed over worker processes), or the part of it a path names (`null` when none). */
export async function nodeStats(request: Request, services: Services): Promise<Reply> {
  requireMetricsReader(request.userCtx);
  return statsAt(request.segments.slice(3), services);
}

async function statsAt(path: readonly string[], services: Services): Promise<Reply> {
  const found = subtree(await (await nodeMetrics(services.gather)).stats(), path);
  return json(200, found === undefined ? null : found);
}

/** `GET /_node/{node}/_prometheus`: the text exposition format (summed over worker processes). */
export async function nodePrometheus(request: Request, services: Services): Promise<Reply> {
  requireMetricsReader(request.userCtx);
  return prometheus(services);
}

async function prometheus(services: Services): Promise<Reply> {
  const merged = await nodeMetrics(services.gather);
  return { status: 200, body: Buffer.from(await merged.prometheus(), 'utf8'), headers: { 'Content-Type': merged.contentType } };
}

/**
 * `GET /_node/{node}/_system`: CouchDB's shape; with worker processes, the sum over all of them
 * (memory, I/O, `process_count`: the node's), the uptime the oldest one's.
 */
export async function nodeSystem(request: Request, services: Services): Promise<Reply> {
  requireMetricsReader(request.userCtx);
  return json(200, await gatheredSystem(services.gather));
}

/** `GET /_node/{node}/_versions`: the runtime and what it supports, in CouchDB's shape (server admins). */
export async function nodeVersions(_request: Request, services: Services): Promise<Reply> {
  return json(200, versions(services));
}

function versions(services: Services): object {
  return {
    node: { version: process.versions.node, supported_hashes: getHashes() },
    divan: { version: services.version, storage: services.config.getString('divan', 'storage') },
    collation_driver: { name: 'divan', unicode_version: process.versions.unicode },
    // CouchDB names its engine `{name}` (and `version` for spidermonkey only); Divan's sandbox is QuickJS (src/js).
    javascript_engine: { name: 'quickjs' },
  };
}

/**
 * This node's answer to another node of the cluster asking for `/_node/_local/{path}` on behalf of
 * its caller (that node checked who may ask). Only the read-only node endpoints are answered.
 */
export async function answerForPeer(question: NodeQuestion, services: Services): Promise<NodeAnswer> {
  const [what, ...rest] = question.path;
  const reply =
    what === undefined ? json(200, { name: services.nodeName() })
    : what === '_stats' ? await statsAt(rest, services)
    : what === '_prometheus' && rest.length === 0 ? await prometheus(services)
    : what === '_system' && rest.length === 0 ? json(200, await gatheredSystem(services.gather))
    : what === '_versions' && rest.length === 0 ? json(200, versions(services))
    : json(404, { error: 'not_found', reason: 'missing' });
  const body = reply.body;
  return {
    status: reply.status,
    contentType: String(reply.headers?.['Content-Type'] ?? 'application/json'),
    body: Buffer.isBuffer(body) ? body.toString('utf8') : `${JSON.stringify(body)}\n`,
  };
}

/** `GET /_node/{node}`: the node's name. */
export async function nodeName(_request: Request, services: Services): Promise<Reply> {
  return json(200, { name: services.nodeName() });
}
