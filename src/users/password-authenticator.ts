import type { Config } from '../config/config.js';
import type { AuthenticatedUser, PasswordChannel, PasswordChecker } from '../identity/password-checker.js';
import { nameOrPasswordIncorrect, accountLocked } from '../errors/catalog.js';
import type { Logger } from '../log/logger.js';
import type { Admins } from './admins.js';
import { iterationLimits } from './hash-cost.js';
import type { HashUpgrader } from './hash-upgrader.js';
import type { Lockout, LockoutTicket } from './lockout.js';
import type { VerifiedPasswordCache } from './password-cache.js';
import { verifyPasswordHash, type PasswordHash } from './password-hash.js';
import { verifyTotp, type TotpSettings, type TotpVerdict } from './totp.js';
import { TotpReplayGuard } from './totp-replay.js';
import type { UserStore } from './user-store.js';
import type { UserCredentials } from './user-documents.js';

/** The credentials a name resolves to: an `[admins]` hash (with only the roles of a same-named user doc) or a user doc. */
export interface ResolvedCredentials {
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
  readonly #lockout: Lockout;
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
    lockout: Lockout;
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
  async resolve(name: string): Promise<ResolvedCredentials | undefined> {
    const adminHash = this.#admins.hashOf(name);
    if (adminHash) return { hash: adminHash, roles: ['_admin', ...(await this.#users.rolesOf(name))], hasTotp: false };
    const document = await this.#users.lookup(name);
    if (!document) return undefined;
    const credentials: ResolvedCredentials = { hash: document.hash, roles: document.roles, hasTotp: document.hasTotp, document };
    if (document.totp) credentials.totp = document.totp;
    return credentials;
  }

  /**
   * `token` is the TOTP code of a `/_session` login; it is only looked at for users with a second
   * factor, and only after the lockout check.
   */
  async authenticate(name: string, password: string, peer: string, channel: PasswordChannel, token?: string): Promise<AuthenticatedUser> {
    const credentials = await this.resolve(name);
    if (!credentials) {
      // CouchDB treats unknown names on /_session as users with an empty salt, lockout included,
      // so that a lock does not tell which names exist; on Basic they fail at once.
      if (channel === 'session') {
        const ticket = await this.#admit(peer, name, '');
        this.#fail(ticket, peer, name);
      }
      throw nameOrPasswordIncorrect();
    }
    if (channel === 'basic' && credentials.hasTotp) throw nameOrPasswordIncorrect();
    const ticket = await this.#admit(peer, name, credentials.hash.salt);
    // Whatever ends the check early (a 403 for the stored hash, a full PBKDF2 queue) is no
    // verdict on the password: it frees the attempt's place without counting a failure.
    try {
      return await this.#verify(name, password, peer, credentials, ticket, token);
    } finally {
      ticket.settle(false);
    }
  }

  async #verify(name: string, password: string, peer: string, credentials: ResolvedCredentials, ticket: LockoutTicket, token: string | undefined): Promise<AuthenticatedUser> {
    const { hash } = credentials;
    const cached = this.#cache.check(name, hash.salt, password);
    const verified =
      cached ??
      (await verifyPasswordHash(hash, password, iterationLimits(this.#config)));
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
    if (cached === undefined) this.#cache.remember(name, hash.salt, password);
    // Also on a cache hit, as CouchDB: a user who only ever uses Basic must still get upgraded.
    if (credentials.document) this.#upgrader.maybeUpgrade(credentials.document, password);
    return { roles: credentials.roles, salt: hash.salt, hasTotp: credentials.hasTotp };
  }

  /** Waits for the lockout's leave to check a password (see Lockout.admit); 403 when locked. */
  async #admit(peer: string, name: string, salt: string): Promise<LockoutTicket> {
    const ticket = await this.#lockout.admit(peer, name, salt);
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
