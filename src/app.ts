import { mkdirSync, accessSync, constants as fsConstants, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClusterLink, type LinkedBus } from './cluster/cluster-link.js';
import type { ClusterBus } from './cluster/cluster-bus.js';
import { LocalGather, type Gather } from './cluster/gather.js';
import { IpcBus } from './cluster/ipc-bus.js';
import { IpcGather } from './cluster/ipc-gather.js';
import { IpcLocks } from './cluster/ipc-locks.js';
import { LocalLocks, type NamedLocks } from './cluster/named-locks.js';
import type { WorkerChannel } from './cluster/worker-protocol.js';
import { openPostgresBus } from './cluster/pg-bus.js';
import { lockoutPool } from './cluster/pg-lockout.js';
import { Config } from './config/config.js';
import { randomHex } from './crypto/crypto.js';
import { uuids } from './crypto/uuids.js';
import { StartupError } from './errors/startup-error.js';
import { createPipeline } from './http/dispatch/pipeline.js';
import { Listeners } from './http/server.js';
import type { Services } from './http/services.js';
import { wireData, type DataLayer } from './wiring/data-layer.js';
import { receiveClusterMessages, shareLockout, wireIdentity, type Identity } from './wiring/identity.js';
import { wireViews } from './wiring/views.js';
import { wireReplication } from './wiring/replication.js';
import { Logger } from './log/logger.js';
import { shareMetrics } from './metrics/gathered-metrics.js';
import { Metrics } from './metrics/metrics.js';
import { shareTasks } from './tasks/gathered-tasks.js';
import type { Storage } from './storage/storage.js';
import { openSqliteStorage } from './storage/sqlite/sqlite-storage.js';
import { openPostgresStorage } from './storage/postgres/postgres-storage.js';
import { applyEnvironment, ensureAnAdmin } from './users/admin-bootstrap.js';
import { Admins } from './users/admins.js';
import { followPbkdf2QueueSettings } from './users/hash-cost.js';

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
  worker?: { channel: WorkerChannel; nodeId: string; workers: number };
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
  /** Drains in-flight requests, then closes storage. */
  close(): Promise<void>;
}

function ensureWritableDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, fsConstants.W_OK);
  } catch (error) {
    throw new StartupError(`data directory ${dir} is not writable: ${(error as Error).message}`);
  }
}

/**
 * What must happen once per server start, before any request: the configuration loaded, admins
 * hashed (or one generated), the node uuid. With `[divan] workers` the primary process runs this
 * (and `prepareWorkers`) before forking, so each worker finds it done.
 */
async function bootstrap(options: AppOptions, dataDir: string, log: Logger): Promise<{ config: Config; admins: Admins; generatedAdminPassword?: string }> {
  const env = options.env ?? {};
  const config = await loadConfig(options, dataDir, log);
  followPbkdf2QueueSettings(config);
  const admins = new Admins(config, log);
  await applyEnvironment(config, admins, env);
  await admins.hashAll();
  const generatedAdminPassword = await ensureAnAdmin(config, admins);
  if (config.get('couchdb', 'uuid') === undefined) await config.set('couchdb', 'uuid', randomHex());
  return { config, admins, generatedAdminPassword };
}

/**
 * The primary process's share of a start with worker processes: the once-only steps of
 * `bootstrap`, the schema migrated (storage opened and closed), and on SQLite the cookie secret
 * generated into the writable configuration, so the workers do not race to make one each.
 */
export async function prepareWorkers(options: AppOptions): Promise<{ config: Config; generatedAdminPassword?: string }> {
  const log = options.log ?? new Logger('info');
  const dataDir = resolve(options.dataDir);
  ensureWritableDirectory(dataDir);
  const { config, admins, generatedAdminPassword } = await bootstrap(options, dataDir, log);
  await admins.settled();
  const { backend, bus } = await openStorage(config, dataDir, options.env ?? {}, log);
  await bus?.close();
  await backend.close();
  if (backend.kind === 'sqlite' && config.authString('secret') === '') await config.set('chttpd_auth', 'secret', randomHex());
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
  const { config, admins, generatedAdminPassword } = await bootstrap(options, dataDir, log);

  const { backend, bus, postgres } = await openStorage(config, dataDir, env, log, { nodeId: options.worker?.nodeId, locks });
  const buses: LinkedBus[] = bus ? [{ bus, workers: false }] : [];
  if (ipc) buses.push({ bus: ipc, workers: true });
  const link = buses.length > 0 ? new ClusterLink(buses, log) : undefined;
  const metrics = new Metrics(() => config.getInteger('stats', 'interval'));
  const data = await wireData(config, log, backend, link, metrics);
  // Nodes sharing PostgreSQL admit password checks together (the node's own lockout decides first).
  const sharedLockout = postgres && bus ? { pool: lockoutPool(postgres.url), schema: postgres.schema, nodeId: bus.nodeId } : undefined;
  const identity = wireIdentity(config, log, admins, data, link, metrics, options.worker?.channel, sharedLockout);
  if (link) receiveClusterMessages(link, config, data, identity);
  const leaseHolder = options.worker ? `${config.getString('divan', 'node_name')}#${randomHex().slice(0, 8)}` : undefined;
  // Each worker process keeps its own tasks, jobs and counters: endpoints gather them from all.
  const gather = options.worker ? new IpcGather(options.worker.channel) : new LocalGather();
  const replication = await wireReplication(config, log, data, VERSION, gather, leaseHolder, options.worker?.workers ?? 1, locks);
  shareTasks(data.databases.tasks, gather);
  shareMetrics(metrics, gather);
  const lockout = options.worker ? shareLockout(identity.lockout, gather) : undefined;
  const services = servicesOf({ config, log, admins, metrics, data, identity, replication, link, gather });
  gather.start();
  // Before this worker listens: a replacement must not admit guesses its siblings know are locked.
  await lockout?.inherit();
  // A request or a sibling's message may follow another process's commit: reads then look (sqlite-freshness.ts).
  options.worker?.channel.onMessage(() => backend.outsideEvent?.());
  const listeners = listenersOf(config, services, () => backend.outsideEvent?.());
  return {
    config,
    storage: backend,
    services,
    generatedAdminPassword,
    listen: (port, bind) => listeners.listen(port, bind),
    listenTls: (port, bind) => listeners.listenTls(port, bind),
    async close() {
      // Jobs stop first; open feeds write their last line and end, so draining does not wait for them.
      await replication.close();
      data.changes.close();
      await listeners.drain(10000);
      await Promise.all([admins.settled(), identity.upgrader.settled()]);
      identity.jwt.close();
      gather.close();
      await Promise.all([link?.close(), data.sandbox.close(), sharedLockout?.pool.end().catch(() => undefined)]);
      await backend.close();
    },
  };
}

/** What endpoints may use, from the wired parts. */
function servicesOf(parts: {
  config: Config;
  log: Logger;
  admins: Admins;
  metrics: Metrics;
  data: DataLayer;
  identity: Identity;
  replication: Awaited<ReturnType<typeof wireReplication>>;
  link: ClusterLink | undefined;
  gather: Gather;
}): Services {
  const { config, log, admins, metrics, data, identity, replication, link, gather } = parts;
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
    views: wireViews(data.sandbox, log, data.databases.tasks),
    sandbox: data.sandbox,
    version: VERSION,
    nodeName: () => config.getString('divan', 'node_name'),
    chain: identity.chain,
    replicator: replication.replicator,
    replicatorDocs: replication.docs,
    settled: link ? () => link.settled() : undefined,
  };
}

/** The HTTP and HTTPS listeners, their timeouts and TLS files read from the config when they start. */
function listenersOf(config: Config, services: Services, onRequest: () => void): Listeners {
  const pipeline = createPipeline(services);
  return new Listeners((req, res) => {
    onRequest();
    return pipeline(req, res);
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
  const config = await loadConfig(options, resolve(options.dataDir), new Logger('error'));
  return config.getInteger('divan', 'workers');
}

async function loadConfig(options: AppOptions, dataDir: string, log: Logger): Promise<Config> {
  const files = (options.configFiles ?? []).map((file) => resolve(file));
  const config = await Config.load({
    defaultsFile: options.defaultsFile ?? DEFAULT_INI,
    files,
    writableFile: files.length > 0 ? files[files.length - 1]! : join(dataDir, 'local.ini'),
    // Shown where CouchDB shows it (tools read it to find the data): Divan's data lives in --data-dir.
    runtime: { couchdb: { database_dir: dataDir } },
  });
  log.setLevel(config.getString('log', 'level'));
  const configureUuids = (): void => {
    const algorithm = config.getString('uuids', 'algorithm');
    if (!uuids.configure(algorithm, config.getString('uuids', 'utc_id_suffix'))) log.warning(`[uuids] algorithm ${algorithm} is unknown: sequential is used`);
  };
  configureUuids();
  config.onChange((change) => {
    if (change.section === 'log' && change.key === 'level') log.setLevel(config.getString('log', 'level'));
    if (change.section === 'uuids') configureUuids();
  });
  return config;
}

/**
 * The store `[divan] storage` names: SQLite under the data directory (the default), or PostgreSQL
 * at `[divan] postgres_url` / `DIVAN_POSTGRES_URL` with a cluster bus so several nodes can share it.
 */
async function openStorage(
  config: Config,
  dataDir: string,
  env: Readonly<Record<string, string | undefined>>,
  log: Logger,
  { nodeId, locks }: { nodeId?: string; locks?: NamedLocks } = {},
): Promise<{ backend: Storage; bus?: ClusterBus; postgres?: { url: string; schema: string } }> {
  const kind = config.getString('divan', 'storage');
  if (kind === 'sqlite') {
    try {
      return { backend: openSqliteStorage(join(dataDir, 'divan.sqlite'), locks) };
    } catch (error) {
      throw new StartupError((error as Error).message);
    }
  }
  if (kind !== 'postgres') throw new StartupError(`[divan] storage must be sqlite or postgres, not ${JSON.stringify(kind)}`);
  const url = env['DIVAN_POSTGRES_URL'] ?? config.get('divan', 'postgres_url');
  if (url === undefined || url === '') throw new StartupError('[divan] storage = postgres needs [divan] postgres_url or DIVAN_POSTGRES_URL');
  const schema = config.getString('divan', 'postgres_schema');
  try {
    const backend = await openPostgresStorage({ url, schema, onError: (error) => log.warning(`PostgreSQL connection lost: ${error.message}`) });
    try {
      const bus = await openPostgresBus({ url, schema, nodeId, onError: (message) => log.warning(message) });
      return { backend, bus, postgres: { url, schema } };
    } catch (error) {
      await backend.close();
      throw error;
    }
  } catch (error) {
    throw new StartupError((error as Error).message);
  }
}
