import type { Config } from '../config/config.js';
import { iterationLimits } from './hash-cost.js';
import type { HashSettings } from './user-documents.js';

/**
 * Which databases are users databases, and the settings their rules read. The rules themselves
 * are one hook object (users-hooks.ts), which the database layer runs on every write and read.
 */
export class UsersDatabase {
  readonly #config: Config;

  constructor(config: Config) {
    this.#config = config;
  }

  /** `[chttpd_auth] authentication_db`: the users database logins read. */
  get name(): string {
    return this.#config.authString('authentication_db');
  }

  /**
   * CouchDB's `is_users_db`: the configured `authentication_db`, and every database whose last
   * `/`-separated segment is `_users` or `[couchdb] users_db_suffix` (`_users`, `acme/_users`; not
   * `acme_users`). They all get the hashing, validation and read rules of a users database.
   */
  isUsersDb(db: string): boolean {
    if (db === this.name) return true;
    const last = db.slice(db.lastIndexOf('/') + 1);
    const suffix = this.#config.getString('couchdb', 'users_db_suffix');
    return last === '_users' || (suffix !== '' && last === suffix);
  }

  /** `[chttpd_auth] users_db_public`: anyone may read the public fields of every user. */
  isPublic(): boolean {
    return this.#config.authBoolean('users_db_public');
  }

  hashSettings(): HashSettings {
    return {
      scheme: this.#config.authString('password_scheme'),
      prf: this.#config.authString('pbkdf2_prf'),
      iterations: this.#config.authInteger('iterations'),
      passwordRegexp: this.#config.authString('password_regexp'),
      maxIterations: iterationLimits(this.#config).max,
    };
  }

  publicFields(): string[] {
    return this.#config
      .authString('public_fields')
      .split(',')
      .map((field) => field.trim())
      .filter(Boolean);
  }
}
