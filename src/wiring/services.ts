/** What endpoints may use (`Services`), from the wired parts. */
import type { ClusterLink } from '../cluster/cluster-link.js';
import type { Gather } from '../cluster/gather.js';
import type { NodePeers } from '../cluster/node-peers.js';
import type { Config } from '../config/config.js';
import type { Services } from '../http/services.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Admins } from '../users/admins.js';
import type { DataLayer } from './data-layer.js';
import type { Identity } from './identity.js';
import type { wireReplication } from './replication.js';
import { wireViews } from './views.js';
import { wireSearch } from './search.js';

interface WiredParts {
  config: Config;
  log: Logger;
  admins: Admins;
  metrics: Metrics;
  data: DataLayer;
  identity: Identity;
  replication: Awaited<ReturnType<typeof wireReplication>>;
  link: ClusterLink | undefined;
  gather: Gather;
  peers?: NodePeers;
  version: string;
}

export function servicesOf(parts: WiredParts): Services {
  const { config, log, admins, metrics, data, identity, replication, link, gather, version, peers } = parts;
  return {
    config,
    databases: data.databases,
    admins,
    authenticator: identity.authenticator,
    cookies: identity.cookies,
    log,
    changes: data.changes,
    metrics,
    gather,
    peers,
    views: wireViews(data.sandbox, config, log, data.databases.tasks),
    search: wireSearch(data.sandbox, log, data.backend.search),
    sandbox: data.sandbox,
    version,
    nodeName: () => config.getString('divan', 'node_name'),
    chain: identity.chain,
    replicator: replication.replicator,
    replicatorDocs: replication.docs,
    settled: link ? () => link.settled() : undefined,
  };
}
