import { mkdirSync, accessSync, constants as fsConstants, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BasicHandler } from './auth/basic/basic-handler.js';
import { buildChain, type HandlerRegistry } from './auth/build-chain.js';
import type { AuthChain } from './auth/chain.js';
import type { AuthHandler } from './auth/types.js';
import { ClusterLink } from './cluster/cluster-link.js';
import type { ClusterBus } from './cluster/cluster-bus.js';
import { openPostgresBus } from './cluster/pg-bus.js';
import { Config } from './config/config.js';
import { randomHex } from './crypto/crypto.js';
import { defaultSecurity } from './databases/security.js';
import { StartupError } from './errors/startup-error.js';
import { createPipeline } from './http/pipeline.js';
import { Listeners } from './http/server.js';
import type { Services } from './http/services.js';
import { Logger } from './log/logger.js';
import type { Storage } from './storage/storage.js';
import { openSqliteStorage } from './storage/sqlite/sqlite-storage.js';
import { openPostgresStorage } from './storage/postgres/postgres-storage.js';
import { storedSecret } from './auth/cookie/shared-secret.js';
import { CookieHandler } from './auth/cookie/cookie-handler.js';
import { CookieService } from './auth/cookie/cookie-service.js';
import { ProxyHandler } from './auth/proxy/proxy-handler.js';
import { JwtHandler } from './auth/jwt/jwt-handler.js';
import { ChangeNotifier } from './databases/change-notifier.js';
import { Databases } from './databases/databases.js';
import { HookRegistry } from './databases/hook-registry.js';
import { PerUserDatabases } from './databases/per-user.js';
import { unrunValidationHooks } from './databases/unrun-validation.js';
import { userDocumentsOf } from './databases/user-documents.js';
import { usersDatabaseHooks } from './users/users-hooks.js';
import { applyEnvironment, ensureAnAdmin } from './users/admin-bootstrap.js';
import { Admins } from './users/admins.js';
import { HashUpgrader } from './users/hash-upgrader.js';
import { followPbkdf2QueueSettings } from './users/hash-cost.js';
import { Lockout, lockoutSettings } from './users/lockout.js';
import { TotpReplayGuard } from './users/totp-replay.js';
import { UserStore } from './users/user-store.js';
import { UsersDatabase } from './users/users-database.js';
import { PasswordAuthenticator } from './users/password-authenticator.js';
import { passwordCacheSettings, VerifiedPasswordCache } from './users/password-cache.js';

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

/** The composition root: config, storage, users, authentication and HTTP, wired once. */
export async function createApp(options: AppOptions): Promise<App> {
  const log = options.log ?? new Logger('info');
  const dataDir = resolve(options.dataDir);
  ensureWritableDirectory(dataDir);
  const env = options.env ?? {};
  const config = await loadConfig(options, dataDir, log);
  followPbkdf2QueueSettings(config);
  const admins = new Admins(config, log);
  await applyEnvironment(config, admins, env);
  await admins.hashAll();
  const generatedAdminPassword = await ensureAnAdmin(config, admins);
  if (config.get('couchdb', 'uuid') === undefined) await config.set('couchdb', 'uuid', randomHex());

  const { backend, bus } = await openStorage(config, dataDir, env, log);
  const link = bus ? new ClusterLink(bus, log) : undefined;
  const data = await wireData(config, log, backend, link);
  const identity = wireIdentity(config, log, admins, data, link);
  if (link) receiveClusterMessages(link, data, identity);

  const services: Services = {
    config,
    databases: data.databases,
    admins,
    authenticator: identity.authenticator,
    cookies: identity.cookies,
    log,
    changes: data.changes,
    version: VERSION,
    nodeName: () => config.getString('divan', 'node_name'),
    chain: identity.chain,
  };
  const listeners = new Listeners(createPipeline(services), {
    timeouts: () => ({
      headersTimeout: config.getInteger('divan', 'headers_timeout'),
      requestTimeout: config.getInteger('divan', 'request_timeout'),
      keepAliveTimeout: config.getInteger('divan', 'keepalive_timeout'),
    }),
    tlsFiles: () => ({ certFile: config.getString('ssl', 'cert_file'), keyFile: config.getString('ssl', 'key_file') }),
  });
  return {
    config,
    storage: backend,
    services,
    generatedAdminPassword,
    listen: (port, bind) => listeners.listen(port, bind),
    listenTls: (port, bind) => listeners.listenTls(port, bind),
    async close() {
      // Open feeds write their last line and end, so draining does not wait for them.
      data.changes.close();
      await listeners.drain(10000);
      await admins.settled();
      await identity.upgrader.settled();
      identity.jwt.close();
      await link?.close();
      await backend.close();
    },
  };
}

async function loadConfig(options: AppOptions, dataDir: string, log: Logger): Promise<Config> {
  const files = (options.configFiles ?? []).map((file) => resolve(file));
  const config = await Config.load({
    defaultsFile: options.defaultsFile ?? DEFAULT_INI,
    files,
    writableFile: files.length > 0 ? files[files.length - 1]! : join(dataDir, 'local.ini'),
  });
  log.setLevel(config.getString('log', 'level'));
  config.onChange((change) => {
    if (change.section === 'log' && change.key === 'level') log.setLevel(config.getString('log', 'level'));
  });
  return config;
}

interface DataLayer {
  /** The backend itself, for what is no database document (the cluster's shared cookie secret). */
  backend: Storage;
  databases: Databases;
  users: UsersDatabase;
  userStore: UserStore;
  changes: ChangeNotifier;
  perUser: PerUserDatabases;
}

/**
 * The database layer and its hooks, in the order their `beforeDocUpdate` steps run
 * (docs/architecture.md): the fail-closed validate_doc_update refusal first (it costs no password
 * hash), then the users-database rules; after a write, live feeds wake, cached credentials drop
 * (on every node), per-user databases follow.
 */
async function wireData(config: Config, log: Logger, backend: Storage, link: ClusterLink | undefined): Promise<DataLayer> {
  const hooks = new HookRegistry(log);
  const databases = new Databases({ storage: backend, config, hooks }, log);
  const users = new UsersDatabase(config);
  const userStore = new UserStore(backend, config);
  const changes = new ChangeNotifier();
  if (link) changes.connect((dbs) => link.publish({ topic: 'db', dbs }));
  const perUser = new PerUserDatabases(config, log, databases, (db: string): boolean => db === users.name);
  hooks.register(unrunValidationHooks(backend, (db) => users.isUsersDb(db)));
  hooks.register(usersDatabaseHooks(users, (written) => {
    userStore.invalidate(written.ids);
    link?.publish({ topic: 'users', ids: written.ids });
  }));
  hooks.register({ name: 'live _changes feeds', appliesTo: () => true, afterWrite: (written) => changes.changed(written.db) });
  hooks.register(perUser.hooks());
  await databases.ensure(users.name, defaultSecurity('admin_only'));
  return { backend, databases, users, userStore, changes, perUser };
}

interface Identity {
  authenticator: PasswordAuthenticator;
  cookies: CookieService;
  jwt: JwtHandler;
  lockout: Lockout;
  usedCodes: TotpReplayGuard;
  upgrader: HashUpgrader;
  chain: () => AuthChain;
}

/** Passwords, cookies, proxy and JWT, and the authentication chain built from them. */
function wireIdentity(config: Config, log: Logger, admins: Admins, data: DataLayer, link: ClusterLink | undefined): Identity {
  const passwordCache = new VerifiedPasswordCache(passwordCacheSettings(config));
  const lockout = new Lockout(lockoutSettings(config));
  config.onChange((change) => {
    if (change.section === 'couch_passwords_cache') passwordCache.configure(passwordCacheSettings(config));
    if (change.section === 'chttpd_auth_lockout') lockout.configure(lockoutSettings(config));
    if (change.section === 'admins') passwordCache.forget(change.key);
  });
  // Failed passwords count on every node, so guesses spread over nodes still lock the account.
  if (link) lockout.onLocalFailure = (peer, name, salt) => link.publish({ topic: 'lockout', peer, name, salt });
  const usedCodes = new TotpReplayGuard();
  const upgrader = new HashUpgrader(config, userDocumentsOf(data.databases), data.users, log);
  const authenticator = new PasswordAuthenticator({
    config,
    admins,
    users: data.userStore,
    cache: passwordCache,
    lockout,
    upgrader,
    log,
    // On a cluster, a TOTP code used on one node is refused as a replay on every node.
    usedCodes: {
      accept(name: string, salt: string, counter: number): boolean {
        const accepted = usedCodes.accept(name, salt, counter);
        if (accepted) link?.publish({ topic: 'totp', name, salt, counter });
        return accepted;
      },
    },
  });
  const sharedSecret = link ? storedSecret(data.backend, () => link.publish({ topic: 'secret' })) : undefined;
  const cookies = new CookieService(config, log, Date.now, sharedSecret);
  const jwt = new JwtHandler(config, log);
  const registry: HandlerRegistry = new Map<string, AuthHandler>([
    ['cookie', new CookieHandler(cookies, authenticator)],
    ['default', new BasicHandler(authenticator)],
    ['proxy', data.perUser.watchExternal(new ProxyHandler(config, cookies, log))],
    ['jwt', data.perUser.watchExternal(jwt)],
  ]);
  let chain: AuthChain = buildChain(config, registry);
  config.onChange((change) => {
    if (change.section !== 'chttpd' || change.key !== 'authentication_handlers') return;
    try {
      chain = buildChain(config, registry);
    } catch (error) {
      log.error(`keeping the previous authentication chain: ${(error as Error).message}`);
    }
  });
  return { authenticator, cookies, jwt, lockout, usedCodes, upgrader, chain: () => chain };
}

/** What other nodes tell this one: drop cached users, count failures, reload the secret, refuse replays, wake feeds. */
function receiveClusterMessages(link: ClusterLink, data: DataLayer, identity: Identity): void {
  link.receive({
    users: (message) => data.userStore.invalidate(message.ids),
    lockout: (message) => identity.lockout.recordRemoteFailure(message.peer, message.name, message.salt),
    secret: () => identity.cookies.sharedSecretChanged(),
    totp: (message) => identity.usedCodes.accept(message.name, message.salt, message.counter),
    db: (message) => message.dbs.forEach((db) => data.changes.changedElsewhere(db)),
  });
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
): Promise<{ backend: Storage; bus?: ClusterBus }> {
  const kind = config.getString('divan', 'storage');
  if (kind === 'sqlite') {
    try {
      return { backend: openSqliteStorage(join(dataDir, 'divan.sqlite')) };
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
      const bus = await openPostgresBus({ url, schema, onError: (message) => log.warning(message) });
      return { backend, bus };
    } catch (error) {
      await backend.close();
      throw error;
    }
  } catch (error) {
    throw new StartupError((error as Error).message);
  }
}
