import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import { sha1Hex, randomHex } from '../crypto/crypto.js';
import { hashAdminPassword, isHashedAdminValue, parseAdminHash, type PasswordHash } from './password-hash.js';

/**
 * Server admins from `[admins]`. Plaintext values are hashed at start and whenever they change,
 * and the hash is written to the writable config layer, so a plaintext password never stays on
 * disk longer than one PBKDF2 takes.
 */
export class Admins {
  readonly #config: Config;
  readonly #log: Logger;
  readonly #parsed = new Map<string, PasswordHash | undefined>();
  readonly #hashing = new Map<string, Promise<void>>();

  constructor(config: Config, log: Logger) {
    this.#config = config;
    this.#log = log;
    config.onChange((change) => {
      // A change from another worker is hashed by that worker, which tells this one the hash.
      if (change.section === 'admins' && !change.remote && change.value !== undefined && !isHashedAdminValue(change.value)) {
        void this.#hash(change.key, change.value);
      }
    });
  }

  /** The stored hash of an admin; undefined when not an admin or not hashed yet. */
  hashOf(name: string): PasswordHash | undefined {
    const value = this.#config.get('admins', name);
    if (value === undefined) return undefined;
    if (!this.#parsed.has(value)) {
      if (this.#parsed.size > 1000) this.#parsed.clear();
      this.#parsed.set(value, parseAdminHash(value));
    }
    return this.#parsed.get(value);
  }

  names(): string[] {
    return Object.keys(this.#config.section('admins'));
  }

  /**
   * Hashes every plaintext admin password now, one after another (PBKDF2 places are shared with
   * logins); resolves when all are persisted.
   */
  async hashAll(): Promise<void> {
    const admins = this.#config.section('admins');
    for (const [name, value] of Object.entries(admins)) {
      if (!isHashedAdminValue(value)) await this.#hash(name, value);
    }
  }

  /** Waits for hashing started by config changes (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.#hashing.size > 0) await Promise.all(this.#hashing.values());
  }

  #hash(name: string, plaintext: string): Promise<void> {
    const inFlight = this.#hashing.get(name);
    if (inFlight) return inFlight.then(() => this.#hashIfStill(name, plaintext));
    const work = this.#hashIfStill(name, plaintext).finally(() => this.#hashing.delete(name));
    this.#hashing.set(name, work);
    return work;
  }

  async #hashIfStill(name: string, plaintext: string): Promise<void> {
    try {
      const hashed = await this.hashPassword(plaintext);
      // Another change may have landed while PBKDF2 ran; only replace the value we hashed.
      if (this.#config.get('admins', name) !== plaintext) return;
      await this.#config.set('admins', name, hashed);
    } catch (error) {
      this.#log.error(`could not hash the password of admin ${JSON.stringify(name)}: ${(error as Error).message}`);
    }
  }

  async hashPassword(plaintext: string): Promise<string> {
    const scheme = this.#config.authString('password_scheme');
    if (scheme === 'simple') {
      const salt = randomHex();
      return `-hashed-${sha1Hex(plaintext + salt)},${salt}`;
    }
    const prf = this.#config.authString('pbkdf2_prf');
    const iterations = this.#config.authInteger('iterations');
    return hashAdminPassword(plaintext, prf, iterations);
  }
}
