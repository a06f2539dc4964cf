/**
 * The identity part of the composition root (app.ts): passwords, cookies, proxy and JWT, the
 * authentication chain, and what other nodes say about them.
 */
import { BasicHandler } from '../auth/basic/basic-handler.js';
import { buildChain, type HandlerRegistry } from '../auth/build-chain.js';
import { DEFAULT_AUTHENTICATION_HANDLERS } from '../auth/handler-list.js';
import type { AuthChain } from '../auth/chain.js';
import type { AuthHandler } from '../auth/types.js';
import { instrumented } from '../auth/instrumented.js';
import type { Metrics } from '../metrics/metrics.js';
import { storedSecret } from '../auth/cookie/shared-secret.js';
import { CookieHandler } from '../auth/cookie/cookie-handler.js';
import { CookieService } from '../auth/cookie/cookie-service.js';
import { ProxyHandler } from '../auth/proxy/proxy-handler.js';
import { JwtHandler } from '../auth/jwt/jwt-handler.js';
import type { ClusterLink } from '../cluster/cluster-link.js';
import type { Config } from '../config/config.js';
import { userDocumentsOf } from '../databases/user-documents.js';
import type { Logger } from '../log/logger.js';
import type { Admins } from '../users/admins.js';
import { HashUpgrader } from '../users/hash-upgrader.js';
import { IpcLockout } from '../cluster/ipc-lockout.js';
import { PostgresLockout, type PostgresLockoutOptions } from '../cluster/pg-lockout.js';
import type { WorkerChannel } from '../cluster/worker-protocol.js';
import type { Gather } from '../cluster/gather.js';
import type { Json } from '../json/json.js';
import { asLockoutSnapshot, Lockout, lockoutSettings, type LockoutGate } from '../users/lockout.js';
import { TotpReplayGuard } from '../users/totp-replay.js';
import { PasswordAuthenticator } from '../users/password-authenticator.js';
import { passwordCacheSettings, VerifiedPasswordCache } from '../users/password-cache.js';
import type { DataLayer } from './data-layer.js';

export interface Identity {
  authenticator: PasswordAuthenticator;
  cookies: CookieService;
  jwt: JwtHandler;
  lockout: LockoutGate;
  usedCodes: TotpReplayGuard;
  upgrader: HashUpgrader;
  chain: () => AuthChain;
}

/**
 * With several workers the node's lockout is the primary's: each worker's own would admit
 * `threshold` guesses. Nodes sharing PostgreSQL then also take their places in its tables.
 */
function lockoutOf(config: Config, log: Logger, channel: WorkerChannel | undefined, shared: Omit<PostgresLockoutOptions, 'onError'> | undefined): LockoutGate {
  const nodeLockout: LockoutGate = channel ? new IpcLockout(lockoutSettings(config), channel) : new Lockout(lockoutSettings(config));
  if (shared === undefined) return nodeLockout;
  return new PostgresLockout(nodeLockout, lockoutSettings(config), { ...shared, onError: (message) => log.warning(message) });
}

/** Passwords, cookies, proxy and JWT, and the authentication chain built from them. */
export function wireIdentity(
  config: Config,
  log: Logger,
  admins: Admins,
  data: DataLayer,
  link: ClusterLink | undefined,
  metrics: Metrics,
  channel: WorkerChannel | undefined,
  sharedLockout?: Omit<PostgresLockoutOptions, 'onError'>,
): Identity {
  const passwordCache = new VerifiedPasswordCache(passwordCacheSettings(config));
  metrics.watchCache('passwords', passwordCache.counts);
  metrics.watchAuthCache(data.userStore.counts);
  const lockout = lockoutOf(config, log, channel, sharedLockout);
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
    ['cookie', instrumented(new CookieHandler(cookies, authenticator), 'cookie', metrics)],
    ['default', instrumented(new BasicHandler(authenticator), 'basic', metrics)],
    ['proxy', instrumented(data.perUser.watchExternal(new ProxyHandler(config, cookies, log)), 'proxy', metrics)],
    ['jwt', instrumented(data.perUser.watchExternal(jwt), 'jwt', metrics)],
  ]);
  let chain: AuthChain = startingChain(config, registry, log);
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

/**
 * The chain a server starts with. `[chttpd] authentication_handlers` is stored as written, as
 * CouchDB stores it; a list Divan cannot build (a typo) starts CouchDB's default chain, loudly,
 * rather than leaving a server nobody can reach. A running server keeps its working chain instead.
 */
function startingChain(config: Config, registry: HandlerRegistry, log: Logger): AuthChain {
  try {
    return buildChain(config, registry);
  } catch (error) {
    log.error(`${(error as Error).message}: starting with the default handlers (${DEFAULT_AUTHENTICATION_HANDLERS})`);
    return buildChain(config, registry, DEFAULT_AUTHENTICATION_HANDLERS);
  }
}

/**
 * What other nodes and workers tell this one: drop cached users, count failures, reload the
 * secret, refuse replays, wake feeds, follow configuration changes (sibling workers only). A
 * configuration change made here is told to the sibling workers in turn.
 */
export function receiveClusterMessages(link: ClusterLink, config: Config, data: DataLayer, identity: Identity): void {
  config.onChange((change) => {
    if (!change.remote) link.publish({ topic: 'config', section: change.section, key: change.key, value: change.written ?? null });
  });
  link.receive({
    config: (message) => config.applyRemote(message.section, message.key, message.value ?? undefined),
    users: (message) => data.userStore.invalidate(message.ids),
    lockout: (message) => identity.lockout.recordRemoteFailure(message.peer, message.name, message.salt),
    secret: () => identity.cookies.sharedSecretChanged(),
    totp: (message) => identity.usedCodes.accept(message.name, message.salt, message.counter),
    db: (message) => message.dbs.forEach((db) => data.changes.changedElsewhere(db)),
    ddocs: (message) => data.designDocs.invalidate(message.db),
  });
}

const LOCKOUT_TOPIC = 'lockout';

/**
 * With workers: each answers with the lockout failures it knows of (its node's and other nodes'),
 * and `inherit` gives a worker that starts (a replacement) those of its siblings. Failures from
 * other nodes reach only the workers running when they came, so without this a replacement would
 * admit guesses another node had already locked.
 */
export function shareLockout(lockout: LockoutGate, gather: Gather): { inherit(): Promise<void> } {
  gather.answer(LOCKOUT_TOPIC, () => lockout.snapshot() as Json);
  return {
    async inherit() {
      for (const reply of await gather.gather(LOCKOUT_TOPIC)) lockout.merge(asLockoutSnapshot(reply.value));
    },
  };
}
