import type { Config } from '../config/config.js';
import type { JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import { USER_PREFIX, needsHashUpgrade, type UserCredentials } from './user-documents.js';
import type { UsersDatabase } from './users-database.js';

/**
 * The users database as the upgrader reaches it: through the database layer, so the rewrite takes
 * the users-database hooks (hashing, validation, cache invalidation) as every other write does.
 */
export interface UserDocuments {
  /** The current winning revision of a user document, undefined when missing or deleted. */
  current(id: string): Promise<JsonObject | undefined>;
  /** Writes a user document as a server admin; resolves whether or not it conflicted. */
  writeAsAdmin(doc: JsonObject): Promise<void>;
}

/**
 * `[chttpd_auth] upgrade_hash_on_auth`: after a successful slow check of an old-style hash (fewer
 * iterations, another PRF, `simple`), rewrite the user's document with current settings, keeping
 * the salt so that the user's cookies stay valid. Runs in the background; a conflicting client
 * write simply wins.
 */
export class HashUpgrader {
  readonly #config: Config;
  readonly #documents: UserDocuments;
  readonly #users: UsersDatabase;
  readonly #log: Logger;
  readonly #inFlight = new Map<string, Promise<void>>();
  #current = new WeakSet<UserCredentials>();

  constructor(config: Config, documents: UserDocuments, users: UsersDatabase, log: Logger) {
    config.onChange((change) => {
      if (change.section === 'chttpd_auth' || change.section === 'couch_httpd_auth') this.#current = new WeakSet();
    });
    this.#config = config;
    this.#documents = documents;
    this.#users = users;
    this.#log = log;
  }

  maybeUpgrade(credentials: UserCredentials, password: string): void {
    // Credentials objects are replaced whenever the user document changes, and settings changes
    // reset this set: a hash known to be current is not re-examined on every Basic request.
    if (this.#current.has(credentials)) return;
    if (!this.#config.authBoolean('upgrade_hash_on_auth')) return;
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
      const current = await this.#documents.current(USER_PREFIX + credentials.name);
      if (!current || current['_rev'] !== credentials.rev) return;
      const withPassword = Object.fromEntries([
        ...Object.entries(current),
        ['password', password],
        ['preserve_salt', true],
      ]);
      await this.#documents.writeAsAdmin(withPassword);
    } catch (error) {
      this.#log.warning(`could not upgrade the password hash of ${JSON.stringify(credentials.name)}: ${(error as Error).message}`);
    }
  }
}
