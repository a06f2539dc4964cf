import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClusterLink, type LinkedBus } from './cluster/cluster-link.js';
import { LocalGather } from './cluster/gather.js';
import { IpcBus } from './cluster/ipc-bus.js';
import { IpcGather } from './cluster/ipc-gather.js';
import { IpcLocks } from './cluster/ipc-locks.js';
import { lockoutPool } from './cluster/pg-lockout.js';
import { PostgresNodePeers } from './cluster/pg-node-peers.js';
import { answerForPeer } from './http/routes/node.js';
import type { WorkerChannel } from './cluster/worker-protocol.js';
import type { Config } from './config/config.js';
import { randomHex } from './crypto/crypto.js';
import { StartupError } from './errors/startup-error.js';
import { createPipeline } from './http/dispatch/pipeline.js';
import { Listeners } from './http/server.js';
import type { Services } from './http/services.js';
import { LocalLocks } from './locks/named-locks.js';
import { Logger } from './log/logger.js';
import { shareMetrics } from './cluster/gathered-metrics.js';
import { Metrics } from './metrics/metrics.js';
import type { Storage } from './storage/storage.js';
import { shareTasks } from './tasks/gathered-tasks.js';
import { bootstrap, ensureWritableDirectory, loadConfig, type ConfigSources } from './wiring/bootstrap.js';
import { wireData } from './wiring/data-layer.js';
import { receiveClusterMessages, shareLockout, wireIdentity } from './wiring/identity.js';
import { wireReplication } from './wiring/replication.js';
import { servicesOf } from './wiring/services.js';
import { openStorage } from './wiring/storage.js';
import { HeavyLane, type LaneAddress } from './cluster/heavy-lane.js';
import { slicesOf } from './turns/request-slices.js';

export { StartupError };

const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEFAULT_INI = join(PACKAGE_ROOT, 'etc', 'default.ini');
export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;


export interface AppOptions {
  dataDir: string;
  /** `--config` files in order; the last one is the writable layer when given. */
  configFiles?: readonly string[];
  defaultsFile?: string;
  /** `COUCHDB_USER`, `COUCHDB_PASSWORD`, `COUCHDB_SECRET`. */
  env?: Readonly<Record<string, string | undefined>>;
  log?: Logger;
  /**
   * Set in a worker process of `[divan] workers`: its channel to the primary, and the node id it
   * shares with its siblings on the PostgreSQL cluster bus.
   */
  worker?: { channel: WorkerChannel; nodeId: string; workers: number; lane?: WorkerLane };
}

/** A worker's part in the heavy lane (docs/workers.md): one of the lane's processes, or a serving worker that forwards to it. */
export interface WorkerLane {
  address: LaneAddress;
  heavy: boolean;
}

export interface App {
  readonly config: Config;
  readonly storage: Storage;
  readonly services: Services;
  /** Set when Divan generated the `admin` password at this start; print it once. */
  readonly generatedAdminPassword?: string;
  listen(port: number, bind: string): Promise<{ address: string; port: number }>;
  /** The HTTPS listener of `[ssl]` (`cert_file`, `key_file`); CouchDB's `[ssl] port` by default. */
  listenTls(port: number, bind: string): Promise<{ address: string; port: number }>;
  /** The heavy lane's listener, a Unix socket the serving workers forward to. */
  listenLane(path: string): Promise<void>;
  /** Drains in-flight requests, then closes storage. */
  close(): Promise<void>;
}

/**
 * The primary process's share of a start with worker processes: the once-only steps of
 * `bootstrap`, the schema migrated (storage opened and closed), and, for a store no other server
 * shares, the cookie secret generated into the writable configuration, so the workers do not race
 * to make one each.
 */
export async function prepareWorkers(options: AppOptions): Promise<{ config: Config; generatedAdminPassword?: string }> {
  const log = options.log ?? new Logger('info');
  const dataDir = resolve(options.dataDir);
  ensureWritableDirectory(dataDir);
  const { config, admins, generatedAdminPassword } = await bootstrap(sourcesOf(options), dataDir, log);
  await admins.settled();
  const { backend, storage, bus } = await openStorage(config, dataDir, log, { env: options.env ?? {} });
  await bus?.close();
  await storage.close();
  if (!backend.capabilities.sharedByServers && config.authString('secret') === '') await config.set('chttpd_auth', 'secret', randomHex());
  return { config, generatedAdminPassword };
}

/** The composition root: config, storage, users, authentication and HTTP, wired once. */
export async function createApp(options: AppOptions): Promise<App> {
  const log = options.log ?? new Logger('info');
  const dataDir = resolve(options.dataDir);
  ensureWritableDirectory(dataDir);
  const env = options.env ?? {};
  // Listening before the configuration is read: a change a sibling makes meanwhile is kept, not lost.
  const ipc = options.worker ? new IpcBus(options.worker.channel) : undefined;
  // The SQLite write lease and view updaters: granted by the primary when workers share the file.
  const locks = options.worker ? new IpcLocks(options.worker.channel) : new LocalLocks();
  const { config, admins, generatedAdminPassword } = await bootstrap(sourcesOf(options), dataDir, log);

  const { storage, bus, meetingPoint } = await openStorage(config, dataDir, log, { env, nodeId: options.worker?.nodeId, locks });
  const buses: LinkedBus[] = bus ? [{ bus, workers: false }] : [];
  if (ipc) buses.push({ bus: ipc, workers: true });
  const link = buses.length > 0 ? new ClusterLink(buses, log) : undefined;
  const metrics = new Metrics(() => config.getInteger('stats', 'interval'));
  const data = await wireData(config, log, storage, link, metrics);
  // Nodes sharing PostgreSQL admit password checks together (the node's own lockout decides first).
  const sharedLockout = meetingPoint && bus ? { pool: lockoutPool(meetingPoint.url), schema: meetingPoint.schema, nodeId: bus.nodeId } : undefined;
  const identity = wireIdentity(config, log, admins, data, link, metrics, options.worker?.channel, sharedLockout);
  if (link) receiveClusterMessages(link, config, data, identity);
  const leaseHolder = options.worker ? `${config.getString('divan', 'node_name')}#${randomHex().slice(0, 8)}` : undefined;
  // Each worker process keeps its own tasks, jobs and counters: endpoints gather them from all.
  const gather = options.worker ? new IpcGather(options.worker.channel) : new LocalGather();
  const replication = await wireReplication(config, log, data, VERSION, gather, leaseHolder, options.worker?.workers ?? 1, locks, options.worker?.lane?.heavy !== true);
  shareTasks(data.databases.tasks, gather);
  shareMetrics(metrics, gather);
  const lockout = options.worker ? shareLockout(identity.lockout, gather) : undefined;
  // The other nodes sharing PostgreSQL, for /_membership and /_node/{name}/…; they ask this one through its services.
  const peers = meetingPoint && bus
    ? new PostgresNodePeers({ ...meetingPoint, name: config.getString('divan', 'node_name'), bus, answer: (question) => answerForPeer(question, services), warn: (line) => log.warning(line) })
    : undefined;
  const services: Services = servicesOf({ config, log, admins, metrics, data, identity, replication, link, gather, peers, version: VERSION });
  await peers?.start();
  gather.start();
  // Before this worker listens: a replacement must not admit guesses its siblings know are locked.
  await lockout?.inherit();
  // A request or a sibling's message may follow another process's commit: reads then look (sqlite-freshness.ts).
  options.worker?.channel.onMessage(() => storage.outsideEvent?.());
  const listeners = listenersOf(config, services, () => storage.outsideEvent?.(), options.worker?.lane);
  return {
    config, storage, services, generatedAdminPassword,
    listen: (port, bind) => listeners.listen(port, bind),
    listenTls: (port, bind) => listeners.listenTls(port, bind),
    listenLane: (path) => listeners.listenPath(path),
    async close() {
      // Jobs stop first; open feeds write their last line and end, so draining does not wait for them.
      await replication.close();
      data.changes.close();
      await listeners.drain(10000);
      await Promise.all([admins.settled(), identity.upgrader.settled()]);
      identity.jwt.close();
      gather.close();
      await Promise.all([link?.close(), peers?.close(), data.sandbox.close(), sharedLockout?.pool.end().catch(() => undefined)]);
      await storage.close();
    },
  };
}

/** The HTTP and HTTPS listeners, their timeouts and TLS files read from the config when they start. */
function listenersOf(config: Config, services: Services, onRequest: () => void, lane?: WorkerLane): Listeners {
  const pipeline = createPipeline(services, undefined, lane?.heavy ? lane.address.token : undefined);
  const forwarder = lane === undefined || lane.heavy ? undefined : new HeavyLane({ address: lane.address, slices: () => config.getInteger('divan', 'heavy_lane_slices') });
  const handle: typeof pipeline = forwarder === undefined ? pipeline : async (req, res) => {
    if (forwarder.takes(req)) return forwarder.forward(req, res, () => pipeline(req, res));
    await pipeline(req, res);
    forwarder.learn(req, slicesOf(res));
  };
  return new Listeners((req, res) => {
    onRequest();
    return handle(req, res);
  }, {
    timeouts: () => ({
      headersTimeout: config.getInteger('divan', 'headers_timeout'),
      requestTimeout: config.getInteger('divan', 'request_timeout'),
      keepAliveTimeout: config.getInteger('divan', 'keepalive_timeout'),
    }),
    tlsFiles: () => ({ certFile: config.getString('ssl', 'cert_file'), keyFile: config.getString('ssl', 'key_file') }),
  });
}

/** `[divan] workers` as configured (0: one per core), read before anything starts. */
export async function configuredWorkers(options: AppOptions): Promise<number> {
  const config = await loadConfig(sourcesOf(options), resolve(options.dataDir), new Logger('error'));
  return config.getInteger('divan', 'workers');
}

function sourcesOf(options: AppOptions): ConfigSources {
  return { configFiles: options.configFiles, defaultsFile: options.defaultsFile ?? DEFAULT_INI, env: options.env };
}
