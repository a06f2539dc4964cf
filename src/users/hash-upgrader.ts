import type { Config } from '../config/config.js';
import { toEdit } from '../documents/document-json.js';
import type { Logger } from '../log/logger.js';
import type { Storage } from '../storage/storage.js';
import { USER_PREFIX, needsHashUpgrade, type UserCredentials } from './user-documents.js';
import type { UsersDatabase } from './users-database.js';

/**
 * `[chttpd_auth] upgrade_hash_on_auth`: after a successful slow check of an old-style hash (fewer
 * iterations, another PRF, `simple`), rewrite the user's document with current settings, keeping
 * the salt so that the user's cookies stay valid. Runs in the background; a conflicting client
 * write simply wins.
 */
export class HashUpgrader {
  readonly #config: Config;
  readonly #storage: Storage;
  readonly #users: UsersDatabase;
  readonly #log: Logger;
  readonly #inFlight = new Map<string, Promise<void>>();
  #current = new WeakSet<UserCredentials>();

  constructor(config: Config, storage: Storage, users: UsersDatabase, log: Logger) {
    config.onChange((change) => {
      if (change.section === 'chttpd_auth' || change.section === 'couch_httpd_auth') this.#current = new WeakSet();
    });
    this.#config = config;
    this.#storage = storage;
    this.#users = users;
    this.#log = log;
  }

  maybeUpgrade(credentials: UserCredentials, password: string): void {
    // Credentials objects are replaced whenever the user document changes, and settings changes
    // reset this set: a hash known to be current is not re-examined on every Basic request.
    if (this.#current.has(credentials)) return;
    if (!this.#config.authBoolean('upgrade_hash_on_auth', true)) return;
    if (this.#inFlight.has(credentials.name)) return;
    if (!needsHashUpgrade(credentials, this.#users.hashSettings())) {
      this.#current.add(credentials);
      return;
    }
    const work = this.#upgrade(credentials, password).finally(() => this.#inFlight.delete(credentials.name));
    this.#inFlight.set(credentials.name, work);
  }

  /** Resolves when every upgrade started so far has finished (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight.values());
  }

  async #upgrade(credentials: UserCredentials, password: string): Promise<void> {
    try {
      const db = this.#users.name;
      const id = USER_PREFIX + credentials.name;
      const current = await this.#users.current(db, id);
      if (!current || current['_rev'] !== credentials.rev) return;
      const withPassword = Object.fromEntries([
        ...Object.entries(current),
        ['password', password],
        ['preserve_salt', true],
      ]);
      const prepared = await this.#users.prepare(db, withPassword, { userCtx: { name: null, roles: ['_admin'] }, isAdmin: true });
      const { edit } = toEdit(prepared, { newEdits: true });
      await this.#storage.writeDocuments(db, [edit], { newEdits: true });
    } catch (error) {
      this.#log.warning(`could not upgrade the password hash of ${JSON.stringify(credentials.name)}: ${(error as Error).message}`);
    }
  }
}
