/**
 * The jobs of this node (couch_replicator_scheduler): at most `[replicator] max_jobs` run at once,
 * the others wait (`pending`); a job that fails is retried with an exponential backoff
 * (`crashing`) unless the failure is permanent (`failed`); one-shot jobs end `completed`. Jobs come
 * from `POST /_replicate` and from `_replicator` documents; both are listed by `_scheduler/jobs`
 * and in `_active_tasks`.
 */
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { ActiveTasks, TaskHandle } from '../tasks/active-tasks.js';
import { ReplicationRun, type RunResult } from './job.js';
import type { ReplicationSpec } from './options.js';
import { ReplicationSpecError } from './replication-errors.js';

type JobState = 'initializing' | 'pending' | 'running' | 'crashing' | 'completed' | 'failed';

export interface JobOrigin {
  /** `_replicator` and the document's id, or undefined for `_replicate`. */
  db?: string;
  docId?: string;
  user: string | null;
  /** The user is not a server admin: their jobs count against `[replicator] max_jobs_per_user`. */
  capped?: boolean;
}

export interface Job {
  readonly id: string;
  readonly baseId: string;
  readonly spec: ReplicationSpec;
  readonly origin: JobOrigin;
  state: JobState;
  run?: ReplicationRun;
  errorCount: number;
  lastError?: string;
  result?: RunResult;
  startTime: Date;
  lastUpdated: Date;
  events: { type: string; timestamp: string; reason?: string }[];
  /** Called once when the job ends (completed, failed or removed). */
  onEnd?: (error?: unknown) => void;
  retryTimer?: NodeJS.Timeout;
}

export interface SchedulerSettings {
  maxJobs(): number;
  /** `[replicator] max_jobs_per_user` (the node's; Replicator.add counts over every worker). */
  maxJobsPerUser(): number;
  userAgent: string;
  /** Called whenever a document job's state changes (the `_replicator` document is updated). */
  onStateChange?(job: Job): void;
}

const MAX_BACKOFF_MS = 8 * 3600 * 1000;
const BASE_BACKOFF_MS = 5000;
const MAX_EVENTS = 20;

/** The 429 of a user over `[replicator] max_jobs_per_user`. */
export const tooManyJobs = (user: string | null, held: number): ReplicationSpecError =>
  new ReplicationSpecError(429, 'too_many_jobs', `${JSON.stringify(user)} already has ${held} replication jobs, the most [replicator] max_jobs_per_user allows`);

/** Failures that do not go away by waiting: the remote refuses our identity, a database is missing, a malformed job. */
const isPermanent = (error: unknown): boolean => error instanceof ReplicationSpecError;

export class Scheduler {
  readonly #jobs = new Map<string, Job>();
  readonly #settings: SchedulerSettings;
  readonly #tasks: ActiveTasks;
  readonly #log: Logger;

  constructor(settings: SchedulerSettings, tasks: ActiveTasks, log: Logger) {
    this.#settings = settings;
    this.#tasks = tasks;
    this.#log = log;
  }

  get(id: string): Job | undefined {
    return this.#jobs.get(id);
  }

  list(): Job[] {
    return [...this.#jobs.values()];
  }

  /** Adds a job; it runs now if a place is free, else when one is. A user over their cap gets a 429. */
  add(id: string, baseId: string, spec: ReplicationSpec, origin: JobOrigin): Job {
    if (origin.capped) this.#checkCap(origin.user);
    const now = new Date();
    const job: Job = { id, baseId, spec, origin, state: 'pending', errorCount: 0, startTime: now, lastUpdated: now, events: [] };
    this.#event(job, 'added');
    this.#jobs.set(id, job);
    this.#fill();
    return job;
  }

  #checkCap(user: string | null): void {
    const cap = this.#settings.maxJobsPerUser();
    const held = this.list().filter((job) => job.origin.capped && job.origin.user === user).length;
    if (held >= cap) throw tooManyJobs(user, held);
  }

  /** Stops and forgets a job (cancel, a deleted `_replicator` document, shutdown). */
  remove(id: string): boolean {
    const job = this.#jobs.get(id);
    if (!job) return false;
    this.#jobs.delete(id);
    clearTimeout(job.retryTimer);
    job.run?.stop();
    job.onEnd?.(new ReplicationSpecError(500, 'error', 'replication cancelled'));
    this.#fill();
    return true;
  }

  stopAll(): void {
    for (const id of [...this.#jobs.keys()]) this.remove(id);
  }

  #event(job: Job, type: string, reason?: string): void {
    job.events.unshift({ type, timestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), ...(reason ? { reason } : {}) });
    job.events.length = Math.min(job.events.length, MAX_EVENTS);
    job.lastUpdated = new Date();
  }

  #fill(): void {
    const running = this.list().filter((job) => job.state === 'running').length;
    let free = this.#settings.maxJobs() - running;
    for (const job of this.list()) {
      if (free <= 0) break;
      if (job.state !== 'pending') continue;
      free--;
      void this.#start(job).catch((error: unknown) => this.#log.error(`replicator: job ${job.id}: ${(error as Error).message}`));
    }
  }

  #taskOf(job: Job): TaskHandle {
    return this.#tasks.begin({
      type: 'replication',
      replication_id: job.id,
      doc_id: job.origin.docId ?? null,
      database: job.origin.db ?? null,
      user: job.origin.user,
      source: job.spec.source.url,
      target: job.spec.target.url,
      continuous: job.spec.continuous,
      checkpoint_interval: job.spec.checkpointIntervalMs,
    });
  }

  async #start(job: Job): Promise<void> {
    job.state = 'running';
    this.#event(job, 'started');
    const task = this.#taskOf(job);
    const run = new ReplicationRun(job.spec, job.baseId, { log: this.#log, userAgent: this.#settings.userAgent, task });
    job.run = run;
    this.#settings.onStateChange?.(job);
    try {
      job.result = await run.run();
      if (this.#jobs.get(job.id) !== job || run.stopped) return;
      this.#finish(job, 'completed');
    } catch (error) {
      if (this.#jobs.get(job.id) !== job || run.stopped) return;
      this.#crashed(job, error);
    } finally {
      task.finish();
      this.#fill();
    }
  }

  #finish(job: Job, state: 'completed' | 'failed', error?: unknown): void {
    job.state = state;
    this.#event(job, state === 'completed' ? 'finished' : 'crashed', job.lastError);
    this.#settings.onStateChange?.(job);
    this.#jobs.delete(job.id);
    job.onEnd?.(error);
  }

  #crashed(job: Job, error: unknown): void {
    job.errorCount++;
    job.lastError = reasonOf(error);
    this.#log.warning(`replicator: job ${job.id} (${job.spec.source.url} -> ${job.spec.target.url}) failed: ${job.lastError}`);
    // A one-shot `_replicate` answers the error to its caller; so does a permanent failure of a document job.
    if (isPermanent(error) || (!job.origin.db && !job.spec.continuous)) return this.#finish(job, 'failed', error);
    job.state = 'crashing';
    this.#event(job, 'crashed', job.lastError);
    this.#settings.onStateChange?.(job);
    const wait = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.min(job.errorCount - 1, 20));
    job.retryTimer = setTimeout(() => {
      if (this.#jobs.get(job.id) !== job) return;
      job.state = 'pending';
      this.#fill();
    }, wait);
    job.retryTimer.unref();
  }
}

/** A failure as `_scheduler` shows it: `error: reason`, never a credential (remotes' URLs are stripped). */
export function reasonOf(error: unknown): string {
  if (error instanceof ReplicationSpecError) return `${error.error}: ${error.reason}`;
  if (error && typeof error === 'object' && 'error' in error && 'reason' in error) {
    const { error: name, reason } = error as { error: Json; reason: Json };
    return `${String(name)}: ${String(reason)}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The job's counters as `_scheduler` shows them in `info`. */
export function infoOf(job: Job): JsonObject {
  if (job.state === 'crashing' || job.state === 'failed') return { error: job.lastError ?? null };
  const progress = job.run?.progress;
  if (!progress) return {};
  const { stats } = progress;
  return {
    revisions_checked: stats.missing_checked,
    missing_revisions_found: stats.missing_found,
    docs_read: stats.docs_read,
    docs_written: stats.docs_written,
    changes_pending: progress.changesPending,
    doc_write_failures: stats.doc_write_failures,
    bulk_get_docs: stats.bulk_get_docs,
    bulk_get_attempts: stats.bulk_get_attempts,
    checkpointed_source_seq: progress.checkpointedSeq,
    source_seq: progress.sourceSeq,
    through_seq: progress.throughSeq,
  };
}
