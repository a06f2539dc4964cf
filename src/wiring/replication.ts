/**
 * The replicator's part of the composition root (app.ts): the scheduler, the `_replicator`
 * database's jobs (created at start when missing, like `_users`), and their state written back.
 */
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import { REPLICATOR_DB, ReplicatorDocs } from '../replicator/replicator-docs.js';
import { replicatorHooks } from '../replicator/replicator-hooks.js';
import { Replicator } from '../replicator/replicator.js';
import type { DataLayer } from './data-layer.js';

export interface Replication {
  replicator: Replicator;
  docs: ReplicatorDocs;
  close(): Promise<void>;
}

/**
 * `leaseHolder` names this process in the `_replicator` leases: the node name, made unique per
 * process when several worker processes share it, so each document's job runs in exactly one.
 */
export async function wireReplication(config: Config, log: Logger, data: DataLayer, version: string, leaseHolder?: string): Promise<Replication> {
  let docs: ReplicatorDocs | undefined;
  const replicator = new Replicator({
    config,
    log,
    tasks: data.databases.tasks,
    version,
    onStateChange: (job) => void docs?.jobChanged(job),
  });
  data.hooks.register(replicatorHooks(REPLICATOR_DB, (doc) => void replicator.parse(doc)));
  docs = new ReplicatorDocs(data.databases, replicator, log, leaseHolder ?? config.getString('divan', 'node_name'));
  await docs.start(data.changes);
  return {
    replicator,
    docs,
    async close() {
      replicator.close();
      await docs!.stop();
    },
  };
}
