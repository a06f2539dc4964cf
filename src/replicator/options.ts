/**
 * A replication's request (a `_replicate` body or a `_replicator` document) read as CouchDB 3 reads
 * it (couch_replicator_parse `convert_options`): the same option names, types and refusals.
 */
import { isObject } from '../documents/document-json.js';
import type { Json, JsonObject } from '../json/json.js';
import { parseEndpoint, type Endpoint } from './endpoint.js';
import { ReplicationSpecError } from './replication-errors.js';

export interface Defaults {
  workerProcesses: number;
  workerBatchSize: number;
  httpConnections: number;
  connectionTimeoutMs: number;
  retries: number;
  checkpointIntervalMs: number;
  useCheckpoints: boolean;
  protocols: readonly string[];
  maxResponseBytes: number;
  idleBackoffMs: number;
  maxIdleBackoffMs: number;
}

export type ChangesFilter =
  | { kind: 'none' }
  | { kind: 'doc_ids'; ids: string[] }
  | { kind: 'selector'; selector: JsonObject }
  | { kind: 'view'; name: string; queryParams: JsonObject }
  | { kind: 'user'; ddoc: string; name: string; queryParams: JsonObject };

export interface ReplicationSpec {
  source: Endpoint;
  target: Endpoint;
  continuous: boolean;
  createTarget: boolean;
  createTargetParams: JsonObject;
  cancel: boolean;
  /** A replication id given with `cancel` (`replication_id`, `_local_id`, `id`). */
  cancelId?: string;
  filter: ChangesFilter;
  sinceSeq?: Json;
  winningRevsOnly: boolean;
  useCheckpoints: boolean;
  useBulkGet: boolean;
  checkpointIntervalMs: number;
  workerProcesses: number;
  workerBatchSize: number;
  httpConnections: number;
  connectionTimeoutMs: number;
  retries: number;
  /** `[replicator] max_response_size`, a server setting a job cannot raise. */
  maxResponseBytes: number;
  /** `[replicator] idle_backoff` and `max_idle_backoff` (idle-backoff.ts), server settings too. */
  idleBackoffMs: number;
  maxIdleBackoffMs: number;
}

const bad = (reason: string): ReplicationSpecError => new ReplicationSpecError(400, 'bad_request', reason);

function boolean(body: JsonObject, name: string, fallback: boolean): boolean {
  const value = body[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw bad(`parameter \`${name}\` must be a boolean`);
  return value;
}

function object(body: JsonObject, name: string, article = 'a JSON object'): JsonObject | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (!isObject(value)) throw bad(`parameter \`${name}\` must be ${article}`);
  return value;
}

function integer(body: JsonObject, name: string, fallback: number): number {
  const value = body[name];
  if (value === undefined) return fallback;
  const parsed = typeof value === 'string' ? Number.parseInt(value, 10) : value;
  if (typeof parsed !== 'number' || !Number.isInteger(parsed) || parsed < 1) throw bad(`parameter \`${name}\` must be a positive integer`);
  return parsed;
}

function docIds(value: Json | undefined): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((id) => typeof id === 'string')) throw bad('parameter `doc_ids` must be an array');
  return [...new Set((value as string[]).map((id) => decodeURIComponent(id)))].sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
}

function parseFilter(body: JsonObject): ChangesFilter {
  const filter = body['filter'];
  const ids = docIds(body['doc_ids']);
  const selector = object(body, 'selector');
  const queryParams = object(body, 'query_params', 'an object') ?? {};
  const given = [filter !== undefined && filter !== null, ids !== undefined, selector !== undefined].filter(Boolean).length;
  if (given > 1) throw bad('`selector`, `filter` and `doc_ids` are mutually exclusive');
  if (ids) return { kind: 'doc_ids', ids };
  if (selector) return { kind: 'selector', selector };
  if (filter === undefined || filter === null) return { kind: 'none' };
  if (typeof filter !== 'string') throw bad('Invalid filter. Must match `ddocname/filtername` or `filtername`.');
  if (filter.startsWith('_')) return { kind: 'view', name: filter, queryParams };
  const match = /^(?:_design\/)?([^/]+)\/([^/]+)$/.exec(filter);
  if (!match) throw bad('Invalid filter. Must match `ddocname/filtername` or `filtername`.');
  return { kind: 'user', ddoc: match[1]!, name: match[2]!, queryParams };
}

function cancelIdOf(body: JsonObject): string | undefined {
  const id = body['replication_id'] ?? body['_local_id'] ?? body['id'];
  return typeof id === 'string' ? id.replace(/ /g, '+') : undefined;
}

/** The replication `body` asks for; `ReplicationSpecError` (400) when it is malformed. */
export function parseReplication(body: JsonObject, defaults: Defaults): ReplicationSpec {
  const cancel = boolean(body, 'cancel', false);
  const cancelId = cancel ? cancelIdOf(body) : undefined;
  const needsEndpoints = !(cancel && cancelId !== undefined);
  const placeholder = { url: 'http://127.0.0.1/', headers: [], session: false };
  return {
    source: needsEndpoints ? parseEndpoint(body['source'], 'source', defaults.protocols) : placeholder,
    target: needsEndpoints ? parseEndpoint(body['target'], 'target', defaults.protocols) : placeholder,
    continuous: boolean(body, 'continuous', false),
    createTarget: boolean(body, 'create_target', false),
    createTargetParams: object(body, 'create_target_params') ?? {},
    cancel,
    ...(cancelId !== undefined ? { cancelId } : {}),
    filter: parseFilter(body),
    ...(body['since_seq'] !== undefined ? { sinceSeq: body['since_seq'] } : {}),
    winningRevsOnly: boolean(body, 'winning_revs_only', false),
    useCheckpoints: boolean(body, 'use_checkpoints', defaults.useCheckpoints),
    useBulkGet: boolean(body, 'use_bulk_get', true),
    checkpointIntervalMs: integer(body, 'checkpoint_interval', defaults.checkpointIntervalMs),
    workerProcesses: integer(body, 'worker_processes', defaults.workerProcesses),
    workerBatchSize: integer(body, 'worker_batch_size', defaults.workerBatchSize),
    httpConnections: integer(body, 'http_connections', defaults.httpConnections),
    connectionTimeoutMs: integer(body, 'connection_timeout', defaults.connectionTimeoutMs),
    retries: integer(body, 'retries_per_request', defaults.retries),
    maxResponseBytes: defaults.maxResponseBytes,
    idleBackoffMs: defaults.idleBackoffMs,
    maxIdleBackoffMs: defaults.maxIdleBackoffMs,
  };
}
