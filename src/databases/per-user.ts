/**
 * Per-user databases (CouchDB's `couch_peruser`): with `[couch_peruser] enable = true`, every user
 * document written to the users database gives its user a database `<database_prefix><hex of the
 * name>` (default prefix `userdb-`) whose `_security` names that user as admin and member. Deleting
 * the user deletes the database when `delete_dbs = true`, and otherwise takes the user out of its
 * `_security`.
 *
 * Differences from CouchDB, all on the safe side of the same idea:
 * - the work happens before the write that caused it is answered (CouchDB follows `_users` changes
 *   asynchronously), so a client may use its database as soon as its user exists;
 * - with `on_external_user = true`, users that only ever appear through JWT or proxy
 *   authentication (no `_users` document) get their database at their first authenticated request;
 * - only the configured `authentication_db` is followed (CouchDB follows every `…/_users`), so a
 *   secondary users database cannot hand out databases to its names;
 * - the database records the name it was made for (`divan_peruser_owner` in its `_security`):
 *   another name is never added to it and never deletes it. With names refused when they hold
 *   control characters (auth/user-name.ts) no two names share a database any more; the record
 *   keeps it so for databases made before, or by hand.
 *
 * @example
 * const perUser = new PerUserDatabases(config, log, databases, (db) => db === '_users')
 * hooks.register(perUser.hooks())
 * perUserDatabaseName('userdb-', 'bob') // 'userdb-626f62'
 */
import type { AuthHandler, AuthOutcome, AuthRequest } from '../auth/types.js';
import type { Config } from '../config/config.js';
import type { DatabaseHooks } from '../documents/database-hooks.js';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { SecurityObject } from '../storage/storage.js';
import { isAcceptableUserName } from '../identity/user-name.js';
import { userNameFromId } from '../users/user-documents.js';
import type { Databases } from './databases.js';
import { isValidDatabaseName } from './names.js';
import { defaultSecurity } from './security.js';

/** The `_security` member naming the user a per-user database was made for. */
export const OWNER_KEY = 'divan_peruser_owner';

/** How long a user seen through JWT or proxy authentication is not looked at again. */
const EXTERNAL_RECHECK_MS = 60_000;
const EXTERNAL_MAX_REMEMBERED = 10_000;

interface PerUserSettings {
  enable: boolean;
  deleteDbs: boolean;
  prefix: string;
  onExternalUser: boolean;
}

/**
 * CouchDB's name: the prefix, then each byte of the UTF-8 name as lowercase hex without padding
 * (`integer_to_list(X, 16)`: a byte below 0x10 gives one digit).
 */
export function perUserDatabaseName(prefix: string, user: string): string {
  let hex = '';
  for (const byte of Buffer.from(user, 'utf8')) hex += byte.toString(16);
  return `${prefix}${hex}`;
}

function namesOf(group: Json | undefined): string[] {
  if (group === null || typeof group !== 'object' || Array.isArray(group)) return [];
  const names = group['names'];
  return Array.isArray(names) ? names.filter((name): name is string => typeof name === 'string') : [];
}

/** `_security` with `user` added to (or removed from) the names of admins and members; undefined when unchanged. */
function withUser(security: SecurityObject, user: string, add: boolean): SecurityObject | undefined {
  let changed = false;
  const next: JsonObject = { ...security };
  for (const key of ['admins', 'members'] as const) {
    const current = security[key];
    const group: JsonObject = current !== null && typeof current === 'object' && !Array.isArray(current) ? { ...current } : {};
    const names = namesOf(current);
    if (add && !names.includes(user)) {
      group['names'] = [user, ...names];
      changed = true;
    } else if (!add && names.includes(user)) {
      group['names'] = names.filter((name) => name !== user);
      changed = true;
    } else {
      continue;
    }
    next[key] = group;
  }
  return changed ? next : undefined;
}

export class PerUserDatabases {
  readonly #config: Config;
  readonly #log: Logger;
  readonly #isAuthenticationDb: (db: string) => boolean;
  readonly #databases: Databases;
  /** External user name → when it was last made sure of. */
  readonly #externalSeen = new Map<string, number>();
  #warnedPrefix: string | undefined;

  /** `isAuthenticationDb`: the database whose user documents are followed (`authentication_db`). */
  constructor(config: Config, log: Logger, databases: Databases, isAuthenticationDb: (db: string) => boolean) {
    this.#config = config;
    this.#databases = databases;
    this.#log = log;
    this.#isAuthenticationDb = isAuthenticationDb;
    config.onChange((change) => {
      if (change.section === 'couch_peruser') this.#externalSeen.clear();
    });
  }

  settings(): PerUserSettings {
    return {
      enable: this.#config.getBoolean('couch_peruser', 'enable'),
      deleteDbs: this.#config.getBoolean('couch_peruser', 'delete_dbs'),
      prefix: this.#config.getString('couch_peruser', 'database_prefix'),
      onExternalUser: this.#config.getBoolean('couch_peruser', 'on_external_user'),
    };
  }

  /** The settings when per-user databases are on and the prefix is usable; undefined otherwise. */
  #active(): PerUserSettings | undefined {
    const settings = this.settings();
    if (!settings.enable) return undefined;
    // CouchDB refuses to run with a prefix that is not a database name; `x` stands for the hex.
    if (!isValidDatabaseName(`${settings.prefix}x`)) {
      if (this.#warnedPrefix !== settings.prefix) {
        this.#warnedPrefix = settings.prefix;
        this.#log.error(`[couch_peruser] database_prefix ${JSON.stringify(settings.prefix)} is not a legal database name prefix; per-user databases are off`);
      }
      return undefined;
    }
    return settings;
  }

  /**
   * The `afterWrite` hook of the authentication database: the per-user databases of the users
   * whose documents were written are brought up to date before the write is answered.
   */
  hooks(): DatabaseHooks {
    return {
      name: 'per-user databases',
      appliesTo: this.#isAuthenticationDb,
      afterWrite: async ({ db, ids }) => {
        if (ids === 'all' || this.#active() === undefined) return;
        for (const id of new Set(ids)) await this.#followUserDocument(db, id);
      },
    };
  }

  /**
   * Wraps a JWT or proxy handler: a user it authenticates gets a database (`on_external_user`).
   * Without a promise when the handler answers without one and there is nothing to create.
   */
  watchExternal(handler: AuthHandler): AuthHandler {
    const afterwards = (outcome: AuthOutcome): AuthOutcome | Promise<AuthOutcome> => {
      const name = outcome?.userCtx.name;
      // A refused name gets its 400 from the chain; it must not get a database first.
      if (typeof name !== 'string' || name === '' || !isAcceptableUserName(name)) return outcome;
      const ensuring = this.#ensureExternal(name);
      return ensuring === undefined ? outcome : ensuring.then(() => outcome);
    };
    return {
      name: handler.name,
      ...(handler.mayAnswer ? { mayAnswer: (request: AuthRequest) => handler.mayAnswer!(request) } : {}),
      ...(handler.credentialExpiry ? { credentialExpiry: handler.credentialExpiry.bind(handler) } : {}),
      authenticate: (request: AuthRequest): AuthOutcome | Promise<AuthOutcome> => {
        const outcome = handler.authenticate(request);
        return outcome instanceof Promise ? outcome.then(afterwards) : afterwards(outcome);
      },
    };
  }

  /** Undefined when there is nothing to do: per-user databases off, or this name seen lately. */
  #ensureExternal(name: string): Promise<void> | undefined {
    // The two switches first: on every proxy and JWT request, usually both off.
    if (!this.#config.getBoolean('couch_peruser', 'enable') || !this.#config.getBoolean('couch_peruser', 'on_external_user')) return undefined;
    const settings = this.#active();
    if (settings === undefined) return undefined;
    const now = Date.now();
    const seen = this.#externalSeen.get(name);
    if (seen !== undefined && now - seen < EXTERNAL_RECHECK_MS) return undefined;
    return this.#createExternal(name, settings, now);
  }

  async #createExternal(name: string, settings: PerUserSettings, now: number): Promise<void> {
    try {
      await this.ensureDatabase(name, settings);
      if (this.#externalSeen.size >= EXTERNAL_MAX_REMEMBERED) this.#externalSeen.clear();
      this.#externalSeen.set(name, now);
    } catch (error) {
      // Authentication itself succeeded; the database will be tried again on the next request.
      this.#log.warning(`could not create the per-user database of ${JSON.stringify(name)}: ${(error as Error).message}`);
    }
  }

  async #followUserDocument(usersDb: string, id: string): Promise<void> {
    const user = userNameFromId(id);
    // A document stored before names were checked may still carry a refused name: it gets nothing.
    if (user === undefined || user === '' || !isAcceptableUserName(user)) return;
    const settings = this.#active();
    if (settings === undefined) return;
    try {
      if ((await this.#databases.current(usersDb, id)) !== undefined) {
        await this.ensureDatabase(user, settings);
      } else if (settings.deleteDbs) {
        await this.#deleteDatabase(user, settings);
        this.#externalSeen.delete(user);
      } else {
        await this.#removeUser(user, settings);
      }
    } catch (error) {
      // The user document is written (durably); a failure here must not turn it into an error.
      this.#log.warning(`could not update the per-user database of ${JSON.stringify(user)}: ${(error as Error).message}`);
    }
  }

  /**
   * Creates `user`'s database if needed and makes sure its `_security` names the user. A database
   * recorded for another name is left alone (an error, logged by the callers); one without a
   * record (made before records existed, or by an admin) is recorded for `user`, whose hex it is.
   */
  async ensureDatabase(user: string, settings: PerUserSettings = this.settings()): Promise<string> {
    const databases = this.#databases;
    const db = perUserDatabaseName(settings.prefix, user);
    const initial = defaultSecurity(this.#config.getString('couchdb', 'default_security'));
    if (await databases.ensure(db, { ...(withUser(initial, user, true) ?? initial), [OWNER_KEY]: user })) return db;
    const security = await databases.storedSecurity(db);
    if (security === undefined) return db;
    const owner = security[OWNER_KEY];
    if (owner !== undefined && owner !== user) throw new Error(`${db} was made for another user name; it is left as it is`);
    const next = withUser(security, user, true);
    if (next !== undefined || owner === undefined) await databases.storeSecurity(db, { ...(next ?? security), [OWNER_KEY]: user });
    return db;
  }

  async #deleteDatabase(user: string, settings: PerUserSettings): Promise<void> {
    const db = perUserDatabaseName(settings.prefix, user);
    const owner = (await this.#databases.storedSecurity(db))?.[OWNER_KEY];
    if (owner !== undefined && owner !== user) {
      this.#log.warning(`not deleting ${db}: it was made for another user name than ${JSON.stringify(user)}`);
      return;
    }
    await this.#databases.remove(db);
  }

  async #removeUser(user: string, settings: PerUserSettings): Promise<void> {
    const db = perUserDatabaseName(settings.prefix, user);
    const security = await this.#databases.storedSecurity(db);
    if (security === undefined) return;
    const next = withUser(security, user, false);
    if (next !== undefined) await this.#databases.storeSecurity(db, next);
  }
}
