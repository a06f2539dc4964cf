/**
 * One replication run (couch_replicator_scheduler_job): open both ends (creating the target when
 * asked), find the checkpoint both ends share, then read changes in pages of `worker_batch_size`
 * × `worker_processes`, copy the pages' batches in parallel, and checkpoint every
 * `checkpoint_interval` and at the end. A one-shot job ends when the source has no more changes;
 * a continuous one long-polls until it is stopped.
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { TaskHandle } from '../tasks/active-tasks.js';
import { copyBatch } from './batch-worker.js';
import { checkpointRecord, compareLogs, statsOf, type Session, type Stats } from './checkpoints.js';
import { sleep, type ClientSettings } from './http-client.js';
import { IdleBackoff } from './idle-backoff.js';
import type { ReplicationSpec } from './options.js';
import { RemoteDb } from './remote-db.js';

const LONGPOLL_TIMEOUT_MS = 30000;
/** Documents with attachments a batch copies at once (each holds a few network chunks, not its attachments). */
const MULTIPART_DOCUMENTS_AT_ONCE = 4;

interface JobProgress {
  stats: Stats;
  sourceSeq: Json;
  throughSeq: Json;
  checkpointedSeq: Json;
  changesPending: number | null;
}

interface RunContext {
  log: Logger;
  userAgent: string;
  task?: TaskHandle;
}

/** The answer of a one-shot `_replicate` (the checkpoint record, or `no_changes`). */
export type RunResult = JsonObject;

const settingsOf = (spec: ReplicationSpec, userAgent: string): ClientSettings => ({
  connectionTimeoutMs: spec.connectionTimeoutMs,
  retries: spec.retries,
  httpConnections: spec.httpConnections,
  userAgent,
  maxResponseBytes: spec.maxResponseBytes,
});

const pendingOf = (info: JsonObject, seq: Json): number | null => {
  const head = Number.parseInt(String(info['update_seq'] ?? '').split('-')[0]!, 10);
  const at = Number.parseInt(String(seq).split('-')[0]!, 10);
  return Number.isFinite(head) && Number.isFinite(at) ? Math.max(0, head - at) : null;
};

export class ReplicationRun {
  readonly spec: ReplicationSpec;
  readonly baseId: string;
  readonly progress: JobProgress;
  readonly #controller = new AbortController();
  readonly #context: RunContext;

  constructor(spec: ReplicationSpec, baseId: string, context: RunContext) {
    // Every request of the job listens to this signal: many at once are expected, not a leak.
    setMaxListeners(0, this.#controller.signal);
    this.spec = spec;
    this.baseId = baseId;
    this.#context = context;
    this.progress = { stats: statsOf([]), sourceSeq: 0, throughSeq: 0, checkpointedSeq: 0, changesPending: null };
  }

  stop(): void {
    this.#controller.abort();
  }

  get stopped(): boolean {
    return this.#controller.signal.aborted;
  }

  /** Runs until done (one-shot) or stopped (continuous); throws what made it fail. */
  async run(): Promise<RunResult> {
    const settings = settingsOf(this.spec, this.#context.userAgent);
    const source = new RemoteDb(this.spec.source, settings, this.#controller.signal);
    const target = new RemoteDb(this.spec.target, settings, this.#controller.signal);
    try {
      return await this.#replicate(source, target);
    } finally {
      source.close();
      target.close();
    }
  }

  async #replicate(source: RemoteDb, target: RemoteDb): Promise<RunResult> {
    const sourceInfo = await source.open();
    await target.open(this.spec.createTarget, this.spec.createTargetParams);
    const logId = this.baseId;
    const [sourceLog, targetLog] = this.spec.useCheckpoints ? await Promise.all([source.getLocal(logId), target.getLocal(logId)]) : [undefined, undefined];
    const { startSeq: found, history } = compareLogs(sourceLog, targetLog);
    const startSeq = found === 0 ? (this.spec.sinceSeq ?? 0) : found;
    const session: Session = { sessionId: randomBytes(16).toString('hex'), startTime: new Date(), startSeq, docIds: this.spec.filter.kind === 'doc_ids' };
    Object.assign(this.progress, { stats: statsOf(history), sourceSeq: sourceInfo['update_seq'] ?? 0, throughSeq: startSeq, checkpointedSeq: startSeq });
    this.progress.changesPending = pendingOf(sourceInfo, startSeq);
    this.#report();
    const revs = { source: sourceLog?.['_rev'] as string | undefined, target: targetLog?.['_rev'] as string | undefined };
    let record: JsonObject | undefined;
    let writing: Promise<void> = Promise.resolve();
    // A failed checkpoint (logged by the timer, thrown at the end) does not block the next one.
    const checkpoint = (): Promise<void> => (writing = writing.catch(() => undefined).then(write));
    const write = async (): Promise<void> => {
      if (!this.spec.useCheckpoints || this.progress.throughSeq === this.progress.checkpointedSeq) return;
      // The position of this record: pages copied while it is written are the next checkpoint's.
      const seq = this.progress.throughSeq;
      record = checkpointRecord(session, seq, this.progress.stats, history);
      revs.source = await source.putLocal(logId, { ...record, ...(revs.source ? { _rev: revs.source } : {}) });
      revs.target = await target.putLocal(logId, { ...record, ...(revs.target ? { _rev: revs.target } : {}) });
      this.progress.checkpointedSeq = seq;
      this.#report();
    };
    // As CouchDB's job timer: a checkpoint every interval, also while a long poll waits.
    const timer = setInterval(() => void checkpoint().catch((error: unknown) => this.#context.log.warning(`replicator: checkpoint of ${this.baseId}: ${(error as Error).message}`)), this.spec.checkpointIntervalMs);
    let changed: boolean;
    try {
      changed = await this.#follow(source, target);
    } finally {
      clearInterval(timer);
    }
    if (this.stopped) return { ok: true };
    await checkpoint();
    if (!changed || record === undefined) {
      const previous = sourceLog ? Object.fromEntries(Object.entries(sourceLog).filter(([key]) => !key.startsWith('_'))) : {};
      return { ok: true, no_changes: true, ...previous };
    }
    return { ok: true, ...record };
  }

  /** Reads and copies pages of changes (checkpoints are the timer's); answers whether any change was seen. */
  async #follow(source: RemoteDb, target: RemoteDb): Promise<boolean> {
    const { workerBatchSize, workerProcesses, continuous } = this.spec;
    const pageSize = workerBatchSize * workerProcesses;
    const ends = { source, target, useBulkGet: this.spec.useBulkGet, winningRevsOnly: this.spec.winningRevsOnly, documentsAtOnce: MULTIPART_DOCUMENTS_AT_ONCE, log: this.#context.log };
    const idle = new IdleBackoff(this.spec.idleBackoffMs, this.spec.maxIdleBackoffMs);
    let changed = false;
    while (!this.stopped) {
      const asked = Date.now();
      const page = await source.changes(this.progress.throughSeq, pageSize, this.spec.filter, continuous ? { timeoutMs: LONGPOLL_TIMEOUT_MS } : undefined);
      if (this.stopped) break;
      const progressed = page.results.length > 0 && JSON.stringify(page.lastSeq) !== JSON.stringify(this.progress.throughSeq);
      const batches: (typeof page.results)[] = [];
      for (let at = 0; at < page.results.length; at += workerBatchSize) batches.push(page.results.slice(at, at + workerBatchSize));
      await Promise.all(batches.map((batch) => copyBatch(ends, batch, this.progress.stats)));
      if (page.results.length > 0) changed = true;
      this.progress.throughSeq = page.lastSeq;
      if (page.results.length > 0) this.progress.sourceSeq = page.results[page.results.length - 1]!.seq;
      // Caught up when a page comes back short; otherwise what was copied is no longer pending.
      const pending = this.progress.changesPending;
      this.progress.changesPending = page.results.length < pageSize ? 0 : pending === null ? null : Math.max(0, pending - page.results.length);
      this.#report();
      if (!continuous && page.results.length < pageSize) break;
      const wait = idle.after(progressed, Date.now() - asked, LONGPOLL_TIMEOUT_MS);
      if (wait > 0) await sleep(wait, this.#controller.signal);
    }
    return changed;
  }

  #report(): void {
    const { stats, sourceSeq, throughSeq, checkpointedSeq, changesPending } = this.progress;
    this.#context.task?.update({
      revisions_checked: stats.missing_checked,
      missing_revisions_found: stats.missing_found,
      docs_read: stats.docs_read,
      docs_written: stats.docs_written,
      doc_write_failures: stats.doc_write_failures,
      bulk_get_docs: stats.bulk_get_docs,
      bulk_get_attempts: stats.bulk_get_attempts,
      changes_pending: changesPending,
      source_seq: sourceSeq,
      through_seq: throughSeq,
      checkpointed_source_seq: checkpointedSeq,
    });
  }
}
