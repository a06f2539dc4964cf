import { HitCounts } from '../metrics/hit-counts.js';
import type { Config } from '../config/config.js';
import { conflictedUserDocument } from '../errors/catalog.js';
import { renderRevision } from '../documents/document-json.js';
import type { Storage } from '../storage/storage.js';
import { isAcceptableUserName } from '../identity/user-name.js';
import { USER_PREFIX, credentialsFromDoc, type UserCredentials } from './user-documents.js';
import { own } from './user-json.js';
import { flatCopy } from '../json/flat-copy.js';

type UserLookup = UserCredentials | undefined;

/** What the `…Now` lookups answer when the name is not in the cache (nothing is read then). */
export const NOT_CACHED: unique symbol = Symbol('not cached');

/** What one read of a user document gives: its credentials, its roles, whether it has conflicts. */
interface UserRecord {
  credentials: UserLookup;
  roles: string[];
  conflicted: boolean;
}

interface Entry {
  value: UserRecord | undefined;
  expires: number;
}

/**
 * Credentials from `_users` documents, cached (unknown names too, so guessing names costs no storage
 * reads) and dropped on every write to the users database and after `[chttpd_auth_cache]
 * max_lifetime`. A name the user-name rule refuses (auth/user-name.ts) is unknown without a read:
 * a document stored before that rule existed can no longer authenticate.
 */
export class UserStore {
  readonly #storage: Storage;
  readonly #config: Config;
  readonly #now: () => number;
  readonly #cache = new Map<string, Entry>();
  /** Lookups answered from the cache and those that read the users database (CouchDB's auth_cache_hits/misses). */
  readonly counts = new HitCounts();
  /** Bumped by every invalidation, so a lookup that raced with a write does not cache stale data. */
  #generation = 0;

  constructor(storage: Storage, config: Config, now: () => number = Date.now) {
    this.#storage = storage;
    this.#config = config;
    this.#now = now;
  }

  get usersDb(): string {
    return this.#config.authString('authentication_db');
  }

  /** Credentials of a user; undefined when unknown; throws 401 for a conflicted document. */
  async lookup(name: string): Promise<UserLookup> {
    return this.#credentials(await this.#record(name));
  }

  /** `lookup` answered from the cache alone (a repeated request needs no promise); NOT_CACHED otherwise. */
  lookupNow(name: string): UserLookup | typeof NOT_CACHED {
    const record = this.#recordNow(name);
    return record === NOT_CACHED ? NOT_CACHED : this.#credentials(record);
  }

  #credentials(record: UserRecord | undefined): UserLookup {
    if (record?.conflicted && !this.#config.authBoolean('allow_conflicted_user_docs')) throw conflictedUserDocument();
    return record?.credentials;
  }

  /**
   * The roles a same-named document lends an `[admins]` entry (CouchDB's `add_roles`): the winning
   * revision's, whether or not it has conflicts or a password. Nothing else of the document counts
   * for an admin, so no document written by someone else can take an admin's login away.
   */
  async rolesOf(name: string): Promise<string[]> {
    return (await this.#record(name))?.roles ?? [];
  }

  /** `rolesOf` answered from the cache alone; NOT_CACHED otherwise. */
  rolesOfNow(name: string): string[] | typeof NOT_CACHED {
    const record = this.#recordNow(name);
    return record === NOT_CACHED ? NOT_CACHED : (record?.roles ?? []);
  }

  /** Drops cached credentials: of the users named by these document ids, or all. */
  invalidate(ids: readonly string[] | 'all'): void {
    this.#generation++;
    if (ids === 'all') {
      this.#cache.clear();
      return;
    }
    for (const id of ids) if (id.startsWith(USER_PREFIX)) this.#cache.delete(id.slice(USER_PREFIX.length));
  }

  /** The cached record (a hit is counted), or NOT_CACHED when missing or expired (nothing counted). */
  #recordNow(name: string): UserRecord | undefined | typeof NOT_CACHED {
    if (!isAcceptableUserName(name)) return undefined;
    const entry = this.#cache.get(name);
    if (entry === undefined || entry.expires <= this.#now()) return NOT_CACHED;
    this.counts.record(true);
    return entry.value;
  }

  async #record(name: string): Promise<UserRecord | undefined> {
    const cached = this.#recordNow(name);
    if (cached !== NOT_CACHED) return cached;
    this.counts.record(false);
    const now = this.#now();
    const generation = this.#generation;
    const entry = { value: await this.#load(name), expires: now + this.#config.getInteger('chttpd_auth_cache', 'max_lifetime') };
    this.#cache.delete(name);
    if (generation === this.#generation) this.#cache.set(flatCopy(name), entry);
    const max = this.#config.getInteger('chttpd_auth_cache', 'max_objects');
    while (this.#cache.size > Math.max(1, max)) this.#cache.delete(this.#cache.keys().next().value as string);
    return entry.value;
  }

  async #load(name: string): Promise<UserRecord | undefined> {
    let stored;
    try {
      stored = await this.#storage.readDocument(this.usersDb, USER_PREFIX + name);
    } catch {
      // A missing users database means only [admins] can authenticate (as CouchDB).
      return undefined;
    }
    if (!stored || stored.deleted) return undefined;
    const doc = renderRevision(stored);
    const roles = own(doc, 'roles');
    return {
      credentials: credentialsFromDoc(doc),
      roles: Array.isArray(roles) ? roles.filter((role): role is string => typeof role === 'string') : [],
      conflicted: stored.conflicts.length > 0,
    };
  }
}
