import { mkdirSync, accessSync, constants as fsConstants, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BasicHandler } from './auth/basic/basic-handler.js';
import { buildChain, type HandlerRegistry } from './auth/build-chain.js';
import type { AuthChain } from './auth/chain.js';
import type { AuthHandler } from './auth/types.js';
import { Config } from './config/config.js';
import { randomHex } from './crypto/crypto.js';
import { defaultSecurity } from './databases/security.js';
import { createPipeline } from './http/pipeline.js';
import { createServer, drain } from './http/server.js';
import type { Services } from './http/services.js';
import { Logger } from './log/logger.js';
import type { Storage } from './storage/storage.js';
import { openSqliteStorage } from './storage/sqlite/sqlite-storage.js';
import { openPostgresStorage } from './storage/postgres/postgres-storage.js';
import { openPostgresBus } from './storage/postgres/pg-bus.js';
import type { ClusterBus } from './storage/cluster-bus.js';
import { storedSecret } from './auth/cookie/shared-secret.js';
import { CookieHandler } from './auth/cookie/cookie-handler.js';
import { CookieService } from './auth/cookie/cookie-service.js';
import { ProxyHandler } from './auth/proxy/proxy-handler.js';
import { JwtHandler } from './auth/jwt/jwt-handler.js';
import { observeStorage } from './storage/observed-storage.js';
import { ChangeNotifier } from './storage/change-notifier.js';
import { PerUserDatabases } from './users/peruser.js';
import { Admins } from './users/admins.js';
import { HashUpgrader } from './users/hash-upgrader.js';
import { followPbkdf2QueueSettings } from './users/hash-cost.js';
import { Lockout, lockoutMode, type LockoutSettings } from './users/lockout.js';
import { TotpReplayGuard } from './users/totp-replay.js';
import { UserStore } from './users/user-store.js';
import { UsersDatabase } from './users/users-database.js';
import { PasswordAuthenticator } from './users/password-authenticator.js';
import { VerifiedPasswordCache } from './users/password-cache.js';
import { verifyPasswordHash } from './users/password-hash.js';

const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEFAULT_INI = join(PACKAGE_ROOT, 'etc', 'default.ini');
export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** A start-up problem the user can fix; main prints its message as one line. */
export class StartupError extends Error {}

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
  const files = (options.configFiles ?? []).map((file) => resolve(file));
  const config = await Config.load({
    defaultsFile: options.defaultsFile ?? DEFAULT_INI,
    files,
    writableFile: files.length > 0 ? files[files.length - 1]! : join(dataDir, 'local.ini'),
  });
  log.setLevel(config.getString('log', 'level', 'info'));
  config.onChange((change) => {
    if (change.section === 'log' && change.key === 'level') log.setLevel(config.getString('log', 'level', 'info'));
  });

  followPbkdf2QueueSettings(config);
  const admins = new Admins(config, log);
  await applyEnvironment(config, admins, options.env ?? {});
  await admins.hashAll();
  const generatedAdminPassword = await ensureAnAdmin(config, admins);
  if (config.get('couchdb', 'uuid') === undefined) await config.set('couchdb', 'uuid', randomHex());

  const { backend, bus } = await openStorage(config, dataDir, options.env ?? {}, log);
  let userStore: UserStore | undefined;
  // Live _changes feeds wake on every committed write, on this node or (through the bus) another.
  const changes = new ChangeNotifier();
  // Per-user databases follow the users database (and, if configured, JWT and proxy users).
  const perUser: PerUserDatabases = new PerUserDatabases(config, log, (db: string): boolean => users.isUsersDb(db));
  // Every write to the users database, whichever endpoint (or node) made it, drops cached credentials.
  const storage: Storage = perUser.wrap(observeStorage(backend, (change) => {
    changes.changed(change.db);
    if (!userStore || !users.isUsersDb(change.db)) return;
    userStore.invalidate(change.ids);
    if (bus) {
      const payload = change.ids === 'all' || JSON.stringify(change.ids).length > 6000 ? '"all"' : JSON.stringify(change.ids);
      bus.publish('users', payload).catch((error: unknown) => log.warning(`could not tell other nodes about a user change: ${(error as Error).message}`));
    }
  }));
  const users = new UsersDatabase(storage, config);
  userStore = new UserStore(storage, config);
  await storage.createDatabase(users.name, defaultSecurity('admin_only'));

  const passwordCache = new VerifiedPasswordCache(passwordCacheSettings(config));
  const lockout = new Lockout(lockoutSettings(config));
  config.onChange((change) => {
    if (change.section === 'couch_passwords_cache') passwordCache.configure(passwordCacheSettings(config));
    if (change.section === 'chttpd_auth_lockout') lockout.configure(lockoutSettings(config));
    if (change.section === 'admins') passwordCache.forget(change.key);
  });
  let cookies: CookieService | undefined;
  if (bus) {
    changes.connect((dbs) => {
      // NOTIFY payloads are small: send the names in slices that fit.
      for (let i = 0; i < dbs.length; i += 40) {
        bus.publish('db', JSON.stringify(dbs.slice(i, i + 40))).catch(() => undefined);
      }
    });
    // Failed passwords count on every node, so guesses spread over nodes still lock the account.
    lockout.onLocalFailure = (peer, name, salt) => {
      bus.publish('lockout', JSON.stringify([peer, name, salt])).catch(() => undefined);
    };
    bus.subscribe((message) => {
      if (message.from === bus.nodeId) return;
      try {
        if (message.topic === 'users') userStore!.invalidate(JSON.parse(message.payload) as string[] | 'all');
        if (message.topic === 'lockout') lockout.recordRemoteFailure(...(JSON.parse(message.payload) as [string, string, string]));
        if (message.topic === 'secret') cookies?.sharedSecretChanged();
        if (message.topic === 'totp') usedCodes.accept(...(JSON.parse(message.payload) as [string, string, number]));
        if (message.topic === 'db') for (const db of JSON.parse(message.payload) as string[]) changes.changedElsewhere(db);
      } catch {
        log.warning(`ignored a malformed cluster message on ${message.topic}`);
      }
    });
  }
  const upgrader = new HashUpgrader(config, storage, users, log);
  const usedCodes = new TotpReplayGuard();
  const authenticator = new PasswordAuthenticator({
    config,
    admins,
    users: userStore,
    cache: passwordCache,
    lockout,
    upgrader,
    log,
    // On a cluster, a TOTP code used on one node is refused as a replay on every node.
    usedCodes: bus
      ? {
          accept(name: string, salt: string, counter: number): boolean {
            const accepted = usedCodes.accept(name, salt, counter);
            if (accepted) bus.publish('totp', JSON.stringify([name, salt, counter])).catch(() => undefined);
            return accepted;
          },
        }
      : usedCodes,
  });
  cookies = new CookieService(
    config,
    log,
    Date.now,
    bus ? storedSecret(storage, () => void bus.publish('secret', '').catch(() => undefined)) : undefined,
  );
  const jwt = new JwtHandler(config, log);
  const registry: HandlerRegistry = new Map<string, AuthHandler>([
    ['cookie', new CookieHandler(cookies, authenticator)],
    ['default', new BasicHandler(authenticator)],
    ['proxy', perUser.watchExternal(new ProxyHandler(config, cookies, log))],
    ['jwt', perUser.watchExternal(jwt)],
  ]);
  let chain: AuthChain = buildChain(config, registry);
  config.onChange((change) => {
    if (change.section === 'chttpd' && change.key === 'authentication_handlers') {
      try {
        chain = buildChain(config, registry);
      } catch (error) {
        log.error(`keeping the previous authentication chain: ${(error as Error).message}`);
      }
    }
  });

  const services: Services = {
    config,
    storage,
    admins,
    users,
    authenticator,
    cookies,
    log,
    changes,
    version: VERSION,
    nodeName: () => config.getString('divan', 'node_name', 'divan@127.0.0.1'),
    chain: () => chain,
  };
  const handle = createPipeline(services);
  const servers: Server[] = [];

  async function listenOn(port: number, bind: string, tls?: { cert: Buffer; key: Buffer }): Promise<{ address: string; port: number }> {
    let server: Server;
    try {
      server = createServer(handle, {
        headersTimeout: config.getInteger('divan', 'headers_timeout', 20000),
        requestTimeout: config.getInteger('divan', 'request_timeout', 300000),
        keepAliveTimeout: config.getInteger('divan', 'keepalive_timeout', 5000),
      }, tls);
    } catch (error) {
      throw new StartupError(`cannot start the ${tls ? 'HTTPS' : 'HTTP'} listener: ${(error as Error).message}`);
    }
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        reject(
          new StartupError(
            error.code === 'EADDRINUSE' ? `port ${port} on ${bind} is already in use` : `cannot listen on ${bind}:${port}: ${error.message}`,
          ),
        );
      });
      server.listen(port, bind, () => resolveListen());
    });
    servers.push(server);
    const address = server.address() as AddressInfo;
    return { address: address.address, port: address.port };
  }

  return {
    config,
    storage,
    services,
    generatedAdminPassword,
    listen: (port: number, bind: string) => listenOn(port, bind),
    listenTls(port: number, bind: string) {
      let tls: { cert: Buffer; key: Buffer };
      try {
        tls = {
          cert: readFileSync(config.getString('ssl', 'cert_file', '')),
          key: readFileSync(config.getString('ssl', 'key_file', '')),
        };
      } catch (error) {
        return Promise.reject(new StartupError(`[ssl] cert_file and key_file must be readable PEM files: ${(error as Error).message}`));
      }
      return listenOn(port, bind, tls);
    },
    async close() {
      // Open feeds write their last line and end, so draining does not wait for them.
      changes.close();
      await Promise.all(servers.map((server) => drain(server, 10000)));
      await admins.settled();
      await upgrader.settled();
      jwt.close();
      await bus?.close();
      await storage.close();
    },
  };
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
  const kind = config.getString('divan', 'storage', 'sqlite');
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
  const schema = config.getString('divan', 'postgres_schema', 'public');
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

function lockoutSettings(config: Config): LockoutSettings {
  return {
    mode: lockoutMode(config.getString('chttpd_auth_lockout', 'mode', 'enforce')),
    threshold: config.getInteger('chttpd_auth_lockout', 'threshold', 5),
    maxObjects: config.getInteger('chttpd_auth_lockout', 'max_objects', 10000),
    maxLifetimeMs: config.getInteger('chttpd_auth_lockout', 'max_lifetime', 300000),
  };
}

function passwordCacheSettings(config: Config): { enabled: boolean; maxObjects: number; maxIdleMs: number } {
  return {
    enabled: config.getBoolean('couch_passwords_cache', 'enable', true),
    maxObjects: config.getInteger('couch_passwords_cache', 'max_objects', 10000),
    maxIdleMs: config.getInteger('couch_passwords_cache', 'max_idle', 600000),
  };
}

/** As in the official CouchDB container: these variables create or update an admin and the secret. */
async function applyEnvironment(config: Config, admins: Admins, env: Readonly<Record<string, string | undefined>>): Promise<void> {
  const secret = env['COUCHDB_SECRET'];
  if (secret && config.authString('secret', '') !== secret) await config.set('chttpd_auth', 'secret', secret);
  const user = env['COUCHDB_USER'];
  const password = env['COUCHDB_PASSWORD'];
  if (!user || password === undefined) return;
  const hash = admins.hashOf(user);
  // Re-hashing on every start would change the salt and end that admin's cookies.
  if (hash && (await verifyPasswordHash(hash, password, { min: 1, max: Number.MAX_SAFE_INTEGER }))) return;
  await config.set('admins', user, await admins.hashPassword(password));
}

/** Divan never runs as an "admin party": with no admin anywhere, it makes one. */
async function ensureAnAdmin(config: Config, admins: Admins): Promise<string | undefined> {
  if (admins.names().length > 0) return undefined;
  const password = randomHex(12);
  await config.set('admins', 'admin', await admins.hashPassword(password));
  return password;
}
