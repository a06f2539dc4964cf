import type { Config } from '../config/config.js';
import { nameOrPasswordIncorrect } from '../errors/catalog.js';
import type { Admins } from './admins.js';
import type { VerifiedPasswordCache } from './password-cache.js';
import { verifyPasswordHash, type PasswordHash } from './password-hash.js';

export interface AuthenticatedUser {
  roles: string[];
  /** The salt of the stored hash: cookies are keyed by it, so a password change ends them. */
  salt: string;
}

/** How a password reached the server; lockout and TOTP rules differ between them. */
export type PasswordChannel = 'basic' | 'session';

interface Credentials {
  hash: PasswordHash;
  roles: string[];
}

/**
 * Checks a name and password against server admins: the verified-password cache first, the slow
 * PBKDF2 only on a miss.
 */
export class PasswordAuthenticator {
  readonly #config: Config;
  readonly #admins: Admins;
  readonly #cache: VerifiedPasswordCache;

  constructor(config: Config, admins: Admins, cache: VerifiedPasswordCache) {
    this.#config = config;
    this.#admins = admins;
    this.#cache = cache;
  }

  async authenticate(name: string, password: string, _peer: string, _channel: PasswordChannel): Promise<AuthenticatedUser> {
    const credentials = this.#lookup(name);
    if (!credentials) throw nameOrPasswordIncorrect();
    const { hash } = credentials;
    const cached = this.#cache.check(name, hash.salt, password);
    const verified =
      cached ??
      (await verifyPasswordHash(hash, password, {
        min: this.#config.authInteger('min_iterations', 1),
        max: this.#config.authInteger('max_iterations', 1000000000),
      }));
    if (!verified) throw nameOrPasswordIncorrect();
    if (cached === undefined) this.#cache.remember(name, hash.salt, password);
    return { roles: credentials.roles, salt: hash.salt };
  }

  #lookup(name: string): Credentials | undefined {
    const hash = this.#admins.hashOf(name);
    return hash ? { hash, roles: ['_admin'] } : undefined;
  }
}
