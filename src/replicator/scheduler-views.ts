/**
 * `_scheduler/jobs` and `_scheduler/docs` as CouchDB 3 renders them (couch_replicator_httpd_util):
 * sources and targets as URLs without credentials, states, counters, and the job's recent events.
 */
import type { JsonObject } from '../json/json.js';
import type { ReplicatorDocs } from './replicator-docs.js';
import { infoOf, type Job, type Scheduler } from './scheduler.js';

const iso = (date: Date): string => date.toISOString().replace(/\.\d+Z$/, 'Z');

export function jobView(job: Job, node: string): JsonObject {
  return {
    database: job.origin.db ?? null,
    id: job.id,
    pid: job.state === 'running' ? `<0.${job.baseId.slice(0, 6)}.0>` : null,
    source: job.spec.source.url,
    target: job.spec.target.url,
    user: job.origin.user,
    doc_id: job.origin.docId ?? null,
    info: infoOf(job),
    history: job.events.map((event) => ({ timestamp: event.timestamp, type: event.type, ...(event.reason ? { reason: event.reason } : {}) })),
    node,
    start_time: iso(job.startTime),
  };
}

export function docView(docs: ReplicatorDocs, scheduler: Scheduler, docId: string, node: string): JsonObject | undefined {
  const tracked = docs.tracked().get(docId);
  if (!tracked) return undefined;
  const job = tracked.jobId ? scheduler.get(tracked.jobId) : undefined;
  const state = tracked.error ? 'failed' : tracked.elsewhere !== undefined ? 'running' : (job?.state ?? tracked.ended?.state ?? 'completed');
  const row = {
    database: '_replicator',
    doc_id: docId,
    id: tracked.jobId ?? tracked.ended?.id ?? null,
    // A lease holder is `node#instance` when worker processes share the node name (wiring/replication.ts).
    node: tracked.elsewhere?.replace(/#[0-9a-f]+$/, '') ?? node,
    state,
  };
  if (job) {
    const { source, target } = job.spec;
    const timing = { last_updated: iso(job.lastUpdated), start_time: iso(job.startTime) };
    return { ...row, source: source.url, target: target.url, info: infoOf(job), error_count: job.errorCount, ...timing, source_proxy: null, target_proxy: null };
  }
  const ended = tracked.ended;
  return {
    ...row,
    source: ended?.source ?? null,
    target: ended?.target ?? null,
    info: tracked.error ? { error: tracked.error } : (ended?.info ?? null),
    error_count: tracked.error || state === 'failed' ? 1 : 0,
    last_updated: ended?.lastUpdated ?? iso(new Date()),
    start_time: ended?.startTime ?? null,
  };
}

/**
 * How much a worker knows of a document's job: it runs it (2), saw it end or fail (1), or only
 * knows who holds its lease (0). With several workers, the answer of the one that knows most wins.
 */
export function docRank(docs: ReplicatorDocs, docId: string): number {
  const tracked = docs.tracked().get(docId);
  return tracked?.jobId !== undefined ? 2 : tracked?.elsewhere !== undefined ? 0 : 1;
}
