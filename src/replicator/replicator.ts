/**
 * The replicator as the HTTP layer sees it: `POST /_replicate` (one-shot answers when done,
 * continuous at once, `cancel`), the jobs for `_scheduler/jobs`, and the settings of
 * `[replicator]` read live from the config.
 */
import type { Gather } from '../cluster/gather.js';
import { LocalLocks, type NamedLocks } from '../locks/named-locks.js';
import type { Config } from '../config/config.js';
import { isServerAdmin } from '../identity/authorization.js';
import type { UserCtx } from '../identity/user-ctx.js';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { ActiveTasks } from '../tasks/active-tasks.js';
import { parseReplication, type Defaults, type ReplicationSpec } from './options.js';
import { RemoteDb } from './remote-db.js';
import { ReplicationSpecError } from './replication-errors.js';
import { replicationId, type FilterPart } from './replication-id.js';
import { Scheduler, tooManyJobs, type Job, type JobOrigin, type SchedulerSettings } from './scheduler.js';

interface ReplicatorOptions {
  config: Config;
  log: Logger;
  tasks: ActiveTasks;
  /** The other worker processes (their jobs are cancelled and found through it). */
  gather: Gather;
  /** The node's named locks: one capped job of a user is admitted at a time across the workers. */
  locks?: NamedLocks;
  /** Processes sharing this node's `max_jobs` (worker processes; 1 for a single process). */
  processes?: number;
  version: string;
  onStateChange?: SchedulerSettings['onStateChange'];
}

/** Which worker runs a job id (`true` from that one); which cancels it (`cancelled`, `unauthorized` or null). */
const RUNS = 'replication_runs';
const CANCEL = 'replication_cancel';
/** How many capped jobs a user has in a worker (`[replicator] max_jobs_per_user` is the node's). */
const USER_JOBS = 'replication_user_jobs';

export class Replicator {
  readonly scheduler: Scheduler;
  readonly #config: Config;
  readonly #gather: Gather;
  readonly #locks: NamedLocks;
  readonly userAgent: string;

  constructor(options: ReplicatorOptions) {
    this.#config = options.config;
    this.userAgent = `Divan-Replicator/${options.version}`;
    const settings: SchedulerSettings = {
      // CouchDB's max_jobs is per node: with N worker processes each runs at most its share.
      maxJobs: () => Math.max(1, Math.ceil(options.config.getInteger('replicator', 'max_jobs') / (options.processes ?? 1))),
      maxJobsPerUser: () => this.#maxJobsPerUser(),
      userAgent: this.userAgent,
      ...(options.onStateChange ? { onStateChange: options.onStateChange } : {}),
    };
    this.scheduler = new Scheduler(settings, options.tasks, options.log);
    this.#gather = options.gather;
    this.#locks = options.locks ?? new LocalLocks();
    options.gather.answer(RUNS, (id) => this.scheduler.get(String(id)) !== undefined);
    options.gather.answer(USER_JOBS, (user) => this.scheduler.list().filter((job) => job.origin.capped && job.origin.user === user).length);
    options.gather.answer(CANCEL, (payload) => this.#cancelHere(payload as { id: string; user: string | null; admin: boolean }));
  }

  defaults(): Defaults {
    const config = this.#config;
    return {
      workerProcesses: config.getInteger('replicator', 'worker_processes'),
      workerBatchSize: config.getInteger('replicator', 'worker_batch_size'),
      httpConnections: config.getInteger('replicator', 'http_connections'),
      connectionTimeoutMs: config.getInteger('replicator', 'connection_timeout'),
      retries: config.getInteger('replicator', 'retries_per_request'),
      checkpointIntervalMs: config.getInteger('replicator', 'checkpoint_interval'),
      useCheckpoints: config.getBoolean('replicator', 'use_checkpoints'),
      protocols: config.getString('replicator', 'valid_endpoint_protocols').split(',').map((item) => item.trim()).filter(Boolean),
      maxResponseBytes: config.getInteger('replicator', 'max_response_size'),
      idleBackoffMs: config.getInteger('replicator', 'idle_backoff'),
      maxIdleBackoffMs: config.getInteger('replicator', 'max_idle_backoff'),
    };
  }

  parse(body: JsonObject): ReplicationSpec {
    return parseReplication(body, this.defaults());
  }

  /** The job id (`{base}{+continuous}{+create_target}`); a JS filter's code is read from the source. */
  async idOf(spec: ReplicationSpec): Promise<{ id: string; baseId: string }> {
    let filter: FilterPart = spec.filter.kind === 'user' ? { kind: 'none' } : spec.filter;
    if (spec.filter.kind === 'user') {
      const source = new RemoteDb(spec.source, { connectionTimeoutMs: spec.connectionTimeoutMs, retries: spec.retries, httpConnections: 1, userAgent: this.userAgent, maxResponseBytes: spec.maxResponseBytes });
      try {
        filter = { kind: 'user', code: await source.filterCode(spec.filter.ddoc, spec.filter.name), queryParams: spec.filter.queryParams };
      } finally {
        source.close();
      }
    }
    const { baseId, extension } = replicationId({
      serverUuid: this.#config.getString('couchdb', 'uuid'),
      source: spec.source,
      target: spec.target,
      filter,
      winningRevsOnly: spec.winningRevsOnly,
      ...(spec.sinceSeq !== undefined ? { sinceSeq: spec.sinceSeq } : {}),
      continuous: spec.continuous,
      createTarget: spec.createTarget,
    });
    return { id: `${baseId}${extension}`, baseId };
  }

  /** `POST /_replicate`: the status and body CouchDB answers (couch_replicator_httpd `handle_req`). */
  async replicate(body: JsonObject, userCtx: UserCtx): Promise<{ status: number; body: JsonObject }> {
    const spec = this.parse(body);
    if (spec.cancel) return this.#cancel(spec, userCtx);
    const { id, baseId } = await this.idOf(spec);
    if (spec.continuous) {
      // Started once per server, whichever worker process was asked first.
      const elsewhere = (await this.#gather.gather(RUNS, id)).some((reply) => reply.value === true);
      if (!elsewhere) await this.add(id, baseId, spec, { user: userCtx.name, capped: !isServerAdmin(userCtx) });
      return { status: 202, body: { ok: true, _local_id: id } };
    }
    const job = await this.add(id, baseId, spec, { user: userCtx.name, capped: !isServerAdmin(userCtx) });
    const result = await this.#ended(job);
    return { status: 200, body: result };
  }

  #maxJobsPerUser(): number {
    return Math.max(1, this.#config.getInteger('replicator', 'max_jobs_per_user'));
  }

  /**
   * The job of this id, added when this worker does not run it yet. A capped user's jobs are counted
   * over every worker of the node first: `max_jobs_per_user` is the node's, as in CouchDB.
   */
  async add(id: string, baseId: string, spec: ReplicationSpec, origin: JobOrigin): Promise<Job> {
    const known = this.scheduler.get(id);
    if (known) return known;
    if (!origin.capped) return this.scheduler.add(id, baseId, spec, origin);
    // Counted and added under the user's lock, so two workers admitting at once see each other's job.
    const release = await this.#locks.acquire(`replicator_user:${String(origin.user)}`);
    try {
      const held = (await this.#gather.gather(USER_JOBS, origin.user)).reduce((sum, reply) => sum + Number(reply.value), 0);
      if (held >= this.#maxJobsPerUser()) throw tooManyJobs(origin.user, held);
      return this.scheduler.get(id) ?? this.scheduler.add(id, baseId, spec, origin);
    } finally {
      release();
    }
  }

  #ended(job: Job): Promise<JsonObject> {
    return new Promise((resolve, reject) => {
      const previous = job.onEnd;
      job.onEnd = (error) => {
        previous?.(error);
        if (error) reject(error);
        else resolve(job.result ?? { ok: true });
      };
    });
  }

  /** CouchDB's cancel: the job may run in any worker process; none has it: 404 `not found`. */
  async #cancel(spec: ReplicationSpec, userCtx: UserCtx): Promise<{ status: number; body: JsonObject }> {
    const id = spec.cancelId ?? (await this.idOf(spec)).id;
    const answers = (await this.#gather.gather(CANCEL, { id, user: userCtx.name, admin: isServerAdmin(userCtx) })).map((reply) => reply.value);
    if (answers.includes('cancelled')) return { status: 200, body: { ok: true, _local_id: id } };
    if (answers.includes('unauthorized')) throw new ReplicationSpecError(401, 'unauthorized', 'Only the owner or a server admin may cancel a replication.');
    return { status: 404, body: { error: 'not found' } };
  }

  /** Cancels a `_replicate` job of this process; `_replicator` documents' jobs end with their document. */
  #cancelHere(asked: { id: string; user: string | null; admin: boolean }): Json {
    const job = this.scheduler.get(asked.id);
    if (!job || job.origin.db !== undefined) return null;
    if (!asked.admin && job.origin.user !== asked.user) return 'unauthorized';
    this.scheduler.remove(asked.id);
    return 'cancelled';
  }

  /** Whether a `_replicator` document's owner is a server admin of `[admins]` (their jobs are not capped). */
  isConfiguredAdmin(name: string | null): boolean {
    return name === null || this.#config.get('admins', name) !== undefined;
  }

  close(): void {
    this.scheduler.stopAll();
  }
}
