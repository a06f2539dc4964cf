import type { Config } from '../config/config.js';
import type { AuthenticatedUser, PasswordChannel, PasswordChecker } from '../identity/password-checker.js';
import { nameOrPasswordIncorrect, accountLocked } from '../errors/catalog.js';
import type { Logger } from '../log/logger.js';
import type { Admins } from './admins.js';
import { iterationLimits } from './hash-cost.js';
import type { HashUpgrader } from './hash-upgrader.js';
import type { LockoutGate, LockoutTicket } from './lockout.js';
import type { VerifiedPasswordCache } from './password-cache.js';
import { verifyPasswordHash, type PasswordHash } from './password-hash.js';
import { verifyTotp, type TotpSettings, type TotpVerdict } from './totp.js';
import { TotpReplayGuard } from './totp-replay.js';
import { NOT_CACHED, type UserStore } from './user-store.js';
import type { UserCredentials } from './user-documents.js';

/** The credentials a name resolves to: an `[admins]` hash (with only the roles of a same-named user doc) or a user doc. */
interface ResolvedCredentials {
  hash: PasswordHash;
  roles: string[];
  hasTotp: boolean;
  /** The second factor; absent with `hasTotp` when the stored one is unusable (nothing matches then). */
  totp?: TotpSettings;
  /** Present when the hash comes from a `_users` document (hash upgrades apply only then). */
  document?: UserCredentials;
}

/**
 * Checks a name and password against server admins and `_users`: lockout first, then the
 * verified-password cache, the slow PBKDF2 only on a miss; counts failures, upgrades old hashes.
 *
 * Users with a `totp` object in their document need a code besides the password on `/_session`
 * and never pass Basic. A wrong, missing or replayed code is a failure like a wrong password: the
 * same 401, counted for lockout under the same key.
 */
export class PasswordAuthenticator implements PasswordChecker {
  readonly #config: Config;
  readonly #admins: Admins;
  readonly #users: UserStore;
  readonly #cache: VerifiedPasswordCache;
  readonly #lockout: LockoutGate;
  readonly #upgrader: HashUpgrader;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #usedCodes: Pick<TotpReplayGuard, 'accept'>;

  /** `now` (milliseconds, default Date.now) is the TOTP clock; `usedCodes` remembers codes already used. */
  constructor(deps: {
    config: Config;
    admins: Admins;
    users: UserStore;
    cache: VerifiedPasswordCache;
    lockout: LockoutGate;
    upgrader: HashUpgrader;
    log: Logger;
    now?: () => number;
    usedCodes?: Pick<TotpReplayGuard, 'accept'>;
  }) {
    this.#config = deps.config;
    this.#admins = deps.admins;
    this.#users = deps.users;
    this.#cache = deps.cache;
    this.#lockout = deps.lockout;
    this.#upgrader = deps.upgrader;
    this.#log = deps.log;
    this.#now = deps.now ?? Date.now;
    this.#usedCodes = deps.usedCodes ?? new TotpReplayGuard();
  }

  /**
   * Admin hash first, else the user doc; undefined when unknown. An `[admins]` entry takes only
   * the roles of a same-named user doc (as CouchDB): never its second factor, and its conflicts do
   * not matter, because anyone who may sign up can write a document with that name.
   */
  resolve(name: string): ResolvedCredentials | undefined | Promise<ResolvedCredentials | undefined> {
    const known = this.resolveNow(name);
    return known === NOT_CACHED ? this.#resolveStored(name) : known;
  }

  async #resolveStored(name: string): Promise<ResolvedCredentials | undefined> {
    const adminHash = this.#admins.hashOf(name);
    if (adminHash) return adminCredentials(adminHash, await this.#users.rolesOf(name));
    return userCredentials(await this.#users.lookup(name));
  }

  /** `resolve` answered from memory alone (the users cache); NOT_CACHED when that needs a read. */
  resolveNow(name: string): ResolvedCredentials | undefined | typeof NOT_CACHED {
    const adminHash = this.#admins.hashOf(name);
    if (adminHash) {
      const roles = this.#users.rolesOfNow(name);
      return roles === NOT_CACHED ? NOT_CACHED : adminCredentials(adminHash, roles);
    }
    const document = this.#users.lookupNow(name);
    return document === NOT_CACHED ? NOT_CACHED : userCredentials(document);
  }

  /**
   * `token` is the TOTP code of a `/_session` login; it is only looked at for users with a second
   * factor, and only after the lockout check.
   */
  async authenticate(name: string, password: string, peer: string, channel: PasswordChannel, token?: string): Promise<AuthenticatedUser> {
    return this.check(name, password, peer, channel, token);
  }

  /**
   * `authenticate` without a promise when nothing needs waiting for (the credentials and the
   * verified password are cached, the lockout admits at once): a repeated Basic request. Refusals
   * are then thrown at once. While the lockout is idle the cache is consulted before admission,
   * which is then certain for a right password (see LockoutGate.admitsAtOnce); otherwise the order
   * is lockout, cache, PBKDF2.
   */
  check(name: string, password: string, peer: string, channel: PasswordChannel, token?: string): AuthenticatedUser | Promise<AuthenticatedUser> {
    const known = this.resolveNow(name);
    if (known === NOT_CACHED) return this.#resolveStored(name).then((credentials) => this.#checkResolved(name, password, peer, channel, credentials, token));
    return this.#checkResolved(name, password, peer, channel, known, token);
  }

  #checkResolved(name: string, password: string, peer: string, channel: PasswordChannel, credentials: ResolvedCredentials | undefined, token: string | undefined): AuthenticatedUser | Promise<AuthenticatedUser> {
    if (!credentials) {
      // CouchDB treats unknown names on /_session as users with an empty salt, lockout included,
      // so that a lock does not tell which names exist; on Basic they fail at once.
      if (channel === 'session') return this.#admitted(peer, name, '', (ticket) => this.#fail(ticket, peer, name));
      throw nameOrPasswordIncorrect();
    }
    if (channel === 'basic' && credentials.hasTotp) throw nameOrPasswordIncorrect();
    const { salt } = credentials.hash;
    let checked = false;
    if (!credentials.hasTotp && this.#lockout.admitsAtOnce(peer, name, salt)) {
      // A cached right password, decided before anything yields, could have come before every
      // attempt still in flight: no place to hold. A wrong one is admitted like any attempt, so
      // that concurrent failures never pass the threshold (several workers share one lockout).
      const cached = this.#cache.check(name, salt, password);
      if (cached === true) return this.#conclude(name, password, peer, credentials, this.#lockout.unreserved(peer, name, salt), token, cached, true);
      checked = cached === undefined;
    }
    return this.#admitted(peer, name, salt, (ticket) => this.#verifyHolding(name, password, peer, credentials, ticket, token, checked));
  }

  /**
   * Whatever ends the check early (a 403 for the stored hash, a full PBKDF2 queue) is no verdict
   * on the password: it frees the attempt's place without counting a failure.
   */
  #verifyHolding(name: string, password: string, peer: string, credentials: ResolvedCredentials, ticket: LockoutTicket, token: string | undefined, checked: boolean): AuthenticatedUser | Promise<AuthenticatedUser> {
    let verdict: AuthenticatedUser | Promise<AuthenticatedUser>;
    try {
      verdict = this.#verify(name, password, peer, credentials, ticket, token, checked);
    } catch (error) {
      ticket.settle(false);
      throw error;
    }
    if (verdict instanceof Promise) return verdict.finally(() => ticket.settle(false));
    ticket.settle(false);
    return verdict;
  }

  /** A cached verification answers at once; only a miss (`checked`: already found missing) waits for the slow PBKDF2. */
  #verify(name: string, password: string, peer: string, credentials: ResolvedCredentials, ticket: LockoutTicket, token: string | undefined, checked: boolean): AuthenticatedUser | Promise<AuthenticatedUser> {
    const cached = checked ? undefined : this.#cache.check(name, credentials.hash.salt, password);
    if (cached !== undefined) return this.#conclude(name, password, peer, credentials, ticket, token, cached, true);
    return verifyPasswordHash(credentials.hash, password, iterationLimits(this.#config)).then((verified) =>
      this.#conclude(name, password, peer, credentials, ticket, token, verified, false),
    );
  }

  #conclude(name: string, password: string, peer: string, credentials: ResolvedCredentials, ticket: LockoutTicket, token: string | undefined, verified: boolean, wasCached: boolean): AuthenticatedUser {
    const { hash } = credentials;
    // Checked whatever the password gave, so that the time taken does not tell a right password
    // with a wrong code from a wrong password.
    const code = credentials.hasTotp ? this.#checkCode(credentials.totp, token) : undefined;
    if (!verified) this.#fail(ticket, peer, name);
    // Only a correct password consumes the code: a guess with a stolen code must not burn it.
    if (code !== undefined && !(code.ok && this.#usedCodes.accept(name, hash.salt, code.counter))) {
      this.#fail(ticket, peer, name, code.ok ? 'replayed TOTP code' : 'wrong or missing TOTP code');
    }
    // Only now: remembering a password whose code failed would make the next try with it faster,
    // telling a right password from a wrong one.
    if (!wasCached) this.#cache.remember(name, hash.salt, password);
    // Also on a cache hit, as CouchDB: a user who only ever uses Basic must still get upgraded.
    if (credentials.document) this.#upgrader.maybeUpgrade(credentials.document, password);
    return { roles: credentials.roles, salt: hash.salt, hasTotp: credentials.hasTotp };
  }

  /**
   * Runs `then` once the lockout admits the attempt: at once when no attempt in flight makes it
   * wait (see Lockout.admit). 403 when locked.
   */
  #admitted<T>(peer: string, name: string, salt: string, then: (ticket: LockoutTicket) => T | Promise<T>): T | Promise<T> {
    const ticket = this.#lockout.admitNow(peer, name, salt);
    if (ticket === undefined) return this.#lockout.admit(peer, name, salt).then((later) => then(this.#judged(later, peer, name)));
    return then(this.#judged(ticket, peer, name));
  }

  #judged(ticket: LockoutTicket, peer: string, name: string): LockoutTicket {
    if (!ticket.locked) return ticket;
    if (this.#lockout.mode === 'enforce') throw accountLocked();
    this.#log.warning(`lockout threshold reached for user ${JSON.stringify(name)} from ${peer} (mode warn)`);
    return ticket;
  }

  #checkCode(settings: TotpSettings | undefined, token: string | undefined): TotpVerdict {
    if (settings === undefined) return { ok: false };
    return verifyTotp(token, settings, this.#now() / 1000);
  }

  /** Counts the failure for lockout, logs it, and answers the one 401 every failure gets. */
  #fail(ticket: LockoutTicket, peer: string, name: string, why?: string): never {
    ticket.settle(true);
    this.#log.warning(`${peer} failed to authenticate as ${JSON.stringify(name)}${why ? ` (${why})` : ''}`);
    throw nameOrPasswordIncorrect();
  }
}

function adminCredentials(hash: PasswordHash, documentRoles: string[]): ResolvedCredentials {
  return { hash, roles: ['_admin', ...documentRoles], hasTotp: false };
}

function userCredentials(document: UserCredentials | undefined): ResolvedCredentials | undefined {
  if (!document) return undefined;
  const credentials: ResolvedCredentials = { hash: document.hash, roles: document.roles, hasTotp: document.hasTotp, document };
  if (document.totp) credentials.totp = document.totp;
  return credentials;
}
