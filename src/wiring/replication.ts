/**
 * The replicator's part of the composition root (app.ts): the scheduler, the `_replicator`
 * database's jobs (created at start when missing, like `_users`), and their state written back.
 */
import type { Gather } from '../cluster/gather.js';
import type { NamedLocks } from '../locks/named-locks.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import { REPLICATOR_DB, ReplicatorDocs } from '../replicator/replicator-docs.js';
import { replicatorHooks } from '../replicator/replicator-hooks.js';
import { Replicator } from '../replicator/replicator.js';
import { shareScheduler } from '../replicator/scheduler-answers.js';
import type { DataLayer } from './data-layer.js';

interface Replication {
  replicator: Replicator;
  docs: ReplicatorDocs;
  close(): Promise<void>;
}

/**
 * `gather` reaches the other worker processes (`_scheduler`, cancel). `leaseHolder` names this
 * process in the `_replicator` leases: the node name, made unique per process when several worker
 * processes share it, so each document's job runs in exactly one.
 */
/**
 * `processes`: the worker processes of this node; each runs its own scheduler, so each takes its
 * share of `[replicator] max_jobs`.
 */
export async function wireReplication(config: Config, log: Logger, data: DataLayer, version: string, gather: Gather, leaseHolder?: string, processes = 1, locks?: NamedLocks, runsJobs = true): Promise<Replication> {
  let docs: ReplicatorDocs | undefined;
  const replicator = new Replicator({
    config,
    processes,
    log,
    tasks: data.databases.tasks,
    gather,
    ...(locks ? { locks } : {}),
    version,
    // Not awaited by the scheduler: a failure (a lease release, say) is logged here, never left unhandled.
    onStateChange: (job) => void docs?.jobChanged(job).catch((error: unknown) => log.warning(`replicator: recording the state of ${job.id}: ${(error as Error).message}`)),
  });
  data.hooks.register(replicatorHooks(REPLICATOR_DB, (doc) => void replicator.parse(doc)));
  docs = new ReplicatorDocs(data.databases, replicator, log, leaseHolder ?? config.getString('divan', 'node_name'));
  shareScheduler(gather, replicator.scheduler, docs, () => config.getString('divan', 'node_name'));
  // A heavy-lane process answers forwarded requests only: the serving workers follow `_replicator` and run its jobs.
  if (runsJobs) await docs.start(data.changes);
  return {
    replicator,
    docs,
    async close() {
      replicator.close();
      await docs!.stop();
    },
  };
}
