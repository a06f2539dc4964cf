import type { AuthChain } from '../auth/chain.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import type { ChangeNotifier } from '../databases/change-notifier.js';
import type { Databases } from '../databases/databases.js';
import type { CookieService } from '../auth/cookie/cookie-service.js';
import type { Admins } from '../users/admins.js';
import type { PasswordAuthenticator } from '../users/password-authenticator.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Gather } from '../cluster/gather.js';
import type { NodePeers } from '../cluster/node-peers.js';
import type { Views } from '../views/views.js';
import type { Search } from '../search/search.js';
import type { Replicator } from '../replicator/replicator.js';
import type { ReplicatorDocs } from '../replicator/replicator-docs.js';
import type { JsSandbox } from '../js/sandbox.js';
import type { Reply } from './reply.js';
import type { Request } from './request.js';

/** What endpoints may use: services and settings, never storage (documents go through `databases`). */
export interface Services {
  readonly config: Config;
  /** The database layer: every database and document read or write (docs/architecture.md). */
  readonly databases: Databases;
  readonly admins: Admins;
  readonly authenticator: PasswordAuthenticator;
  readonly cookies: CookieService;
  readonly log: Logger;
  /** Wakes live `_changes` feeds when a database changes (on this node or, on a cluster, another). */
  readonly changes: ChangeNotifier;
  /** This process's counters and latencies (`_stats` and `_prometheus` gather every process's). */
  readonly metrics: Metrics;
  /**
   * Answers from every worker process, this one's included (`_active_tasks`, `_scheduler`,
   * `_stats`…); a single process answers alone (src/cluster/gather.ts).
   */
  readonly gather: Gather;
  /** Map/reduce views (src/views/). */
  readonly views: Views;
  /** Full-text search, Nouveau's API (src/search/). */
  readonly search: Search;
  /** Replication jobs: `_replicate` and `_scheduler` (src/replicator/). */
  readonly replicator: Replicator;
  /** The jobs of `_replicator` documents, for `_scheduler/docs`. */
  readonly replicatorDocs: ReplicatorDocs;
  /** Design-document JavaScript (filter functions). */
  readonly sandbox: JsSandbox;
  /** The Divan release, for `vendor.version`. */
  readonly version: string;
  /** The node's name, for `/_membership` and `/_node/{name}`. */
  nodeName(): string;
  /** The other nodes of a PostgreSQL cluster (`/_membership`, `/_node/{other}/…`); none on a single server. */
  readonly peers?: NodePeers;
  /** The current authentication chain (rebuilt when `[chttpd] authentication_handlers` changes). */
  chain(): AuthChain;
  /**
   * With worker processes: resolves once what this process told its siblings (a password change,
   * a lockout failure, a configuration change) reached every one; undefined when nothing is under way.
   */
  settled?(): Promise<void> | undefined;
}

/** An endpoint answers with a plain reply when it needs nothing asynchronous (`GET /_session`), saving the request a promise. */
export type Endpoint = (request: Request, services: Services) => Reply | Promise<Reply>;
