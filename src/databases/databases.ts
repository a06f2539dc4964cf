import { requireDbAdmin, requireDbMember, requireServerAdmin } from '../identity/authorization.js';
import type { UserCtx } from '../identity/user-ctx.js';
import type { JsonObject } from '../json/json.js';
import { isCouchError } from '../errors/couch-error.js';
import { databaseExists, databaseMissing, documentMissing, forbidden } from '../errors/catalog.js';
import type { DatabaseLimit, PurgeRequest, SecurityObject } from '../storage/storage.js';
import type { Logger } from '../log/logger.js';
import { callerOf, openAsMember, securityOf } from './access.js';
import { Compactions } from './compactions.js';
import type { ActiveTasks } from '../tasks/active-tasks.js';
import { OpenedDatabase, type LayerContext } from './opened-database.js';
import { defaultSecurity, validateSecurity } from './security.js';
import { keepingProps, partitionedSecurity, withoutProps } from './partitions.js';
import { keepingAccessFlag, refuseUnscoped, withAccessFlag } from './document-access.js';
import { usersDbName } from './settings.js';
import { ensureAuthDesignDoc } from './auth-design-doc-writer.js';

const SERVER_ADMIN: UserCtx = Object.freeze({ name: null, roles: ['_admin'] }) as UserCtx;

/**
 * The database layer as routes and internal callers see it: databases (create, delete, `_security`)
 * and opening one for a caller, after which every document read and write goes through the
 * `OpenedDatabase` and the hooks registered for it. Opening answers 404 for a missing database
 * first, then 401/403 by `_security`, unless a hook's access rule may let a non-member reach a
 * document (the users database: its owner), which is then checked per document.
 */
export class Databases {
  readonly #context: LayerContext;
  readonly #compactions: Compactions;

  /** `log` receives how background compactions end. */
  constructor(context: LayerContext, log?: Logger) {
    this.#context = context;
    this.#compactions = new Compactions(context.storage, context.tasks, log);
  }

  /** This node's `_active_tasks`. */
  get tasks(): ActiveTasks {
    return this.#context.tasks;
  }

  get usersDbName(): string {
    return usersDbName(this.#context.config);
  }

  ping(): Promise<void> {
    return this.#context.storage.ping();
  }

  list(): Promise<string[]> {
    return this.#context.storage.listDatabases();
  }

  /** `PUT /{db}` by a server admin, with `[couchdb] default_security`; `access`: per-document access, for good. */
  async create(db: string, userCtx: UserCtx, options: { partitioned?: boolean; access?: boolean } = {}): Promise<void> {
    requireServerAdmin(userCtx);
    const security = withAccessFlag(defaultSecurity(this.#context.config.getString('couchdb', 'default_security')), options.access === true);
    if (!(await this.ensure(db, options.partitioned ? partitionedSecurity(security) : security))) throw databaseExists();
  }

  async delete(db: string, userCtx: UserCtx): Promise<void> {
    requireServerAdmin(userCtx);
    if (!(await this.remove(db))) throw databaseMissing();
  }

  /**
   * Creates `db` for the server itself (startup, per-user databases); false when it exists. The
   * authentication database gets CouchDB's `_design/_auth` (created, or at start when missing).
   */
  async ensure(db: string, security: SecurityObject): Promise<boolean> {
    const created = await this.#context.storage.createDatabase(db, security);
    if (created) await this.#context.hooks.afterWrite({ db, ids: 'all' });
    if (db === this.usersDbName) await ensureAuthDesignDoc(await this.openAsServer(db));
    return created;
  }

  async remove(db: string): Promise<boolean> {
    const removed = await this.#context.storage.deleteDatabase(db);
    if (removed) await this.#context.hooks.afterWrite({ db, ids: 'all' });
    return removed;
  }

  /** `_security` as the server sees it; undefined when the database does not exist. */
  storedSecurity(db: string): Promise<SecurityObject | undefined> {
    return this.#context.storage.getSecurity(db);
  }

  storeSecurity(db: string, security: SecurityObject): Promise<boolean> {
    return this.#context.storage.putSecurity(db, security);
  }

  async readSecurity(db: string, userCtx: UserCtx): Promise<SecurityObject> {
    return withoutProps(await openAsMember(this.#context.storage, db, userCtx));
  }

  /** `PUT /{db}/_security` by a database admin; the users database's only when `users_db_security_editable`. */
  async replaceSecurity(db: string, userCtx: UserCtx, body: () => Promise<unknown>): Promise<void> {
    const stored = await securityOf(this.#context.storage, db);
    requireDbAdmin(userCtx, stored);
    if (db === this.usersDbName && this.#context.config.getString('couchdb', 'users_db_security_editable') === 'false') {
      throw forbidden("You can't edit the security object of the user database.");
    }
    if (!(await this.#context.storage.putSecurity(db, keepingAccessFlag(stored, keepingProps(validateSecurity(await body()), stored))))) throw databaseMissing();
  }

  /**
   * `POST /{db}/_compact` by a database admin (as CouchDB): starts reclaiming the bodies of
   * superseded revisions and answers at once; `done` resolves when that compaction ends.
   */
  async compact(db: string, userCtx: UserCtx): Promise<{ done: Promise<void> }> {
    requireDbAdmin(userCtx, await securityOf(this.#context.storage, db));
    return { done: this.#compactions.start(db) };
  }

  /** `GET /{db}/_revs_limit` and `_purged_infos_limit`, for members. */
  async databaseLimit(db: string, userCtx: UserCtx, limit: DatabaseLimit): Promise<number> {
    const info = await (await this.open(db, userCtx)).info();
    if (!info) throw databaseMissing();
    return limit === 'revs_limit' ? info.revsLimit : info.purgedInfosLimit;
  }

  /**
   * `PUT /{db}/_revs_limit` by a database admin, `_purged_infos_limit` by a server admin (as
   * CouchDB); a new revs_limit stems each document at its next write.
   */
  async setDatabaseLimit(db: string, userCtx: UserCtx, limit: DatabaseLimit, value: number): Promise<void> {
    if (limit === 'purged_infos_limit') requireServerAdmin(userCtx);
    requireDbAdmin(userCtx, await securityOf(this.#context.storage, db));
    if (!(await this.#context.storage.setDatabaseLimit(db, limit, value))) throw databaseMissing();
  }

  /** `POST /{db}/_purge` by a server admin: per request, the revisions purged; feeds and caches then hear of it. */
  async purge(db: string, userCtx: UserCtx, requests: readonly PurgeRequest[]): Promise<string[][]> {
    requireServerAdmin(userCtx);
    await securityOf(this.#context.storage, db);
    const purged = await this.#context.storage.purgeDocuments(db, requests);
    const ids = requests.filter((_, index) => purged[index]!.length > 0).map((request) => request.id);
    if (ids.length > 0) await this.#context.hooks.afterWrite({ db, ids });
    return purged;
  }

  /** `GET /{db}/_purged_infos`: the purges the database remembers, for members. */
  async purgedInfos(db: string, userCtx: UserCtx): Promise<PurgeRequest[]> {
    await this.open(db, userCtx);
    return this.#context.storage.purgedInfos(db);
  }

  /** Whether this node is compacting `db` (`compact_running`). */
  compactionRunning(db: string): boolean {
    return this.#compactions.isRunning(db);
  }

  /**
   * For members only (database info, `_bulk_docs`, `_revs_diff`, `_local` documents, views, `_find`);
   * in a database with per-document access, for its admins only.
   */
  async open(db: string, userCtx: UserCtx): Promise<OpenedDatabase> {
    const opened = await this.openScoped(db, userCtx);
    refuseUnscoped(opened.security, opened.caller);
    return opened;
  }

  /**
   * For members, where a non-admin of a database with per-document access gets answers scoped to
   * their documents (`GET /{db}`, `_bulk_docs`, `_revs_diff`, `_local/…`: `OpenedDatabase.scope`).
   */
  async openScoped(db: string, userCtx: UserCtx): Promise<OpenedDatabase> {
    const security = await openAsMember(this.#context.storage, db, userCtx);
    return new OpenedDatabase(db, security, callerOf(userCtx, security), this.#context);
  }

  /** The server itself (hash upgrades): a server admin of every database. */
  async openAsServer(db: string): Promise<OpenedDatabase> {
    return this.open(db, SERVER_ADMIN);
  }

  /**
   * For a read or write of one document (`id`), or a POST (no id yet): where a hook's access rule
   * may admit a non-member, membership is left to the read or the write of the document itself.
   */
  async openForDocument(db: string, userCtx: UserCtx, id?: string): Promise<OpenedDatabase> {
    const opened = await this.#openWithAccess(db, userCtx);
    if (id !== undefined) for (const hooks of opened.hooks) hooks.access?.refusePath(id, opened.caller);
    if (!opened.hooks.some((hooks) => hooks.access)) this.#requireMember(opened);
    return opened;
  }

  /** For `open_revs` (of `id`) and `_bulk_get`: a non-member the access rule admits reads, others 404 or 401/403. */
  async openForRevisionReads(db: string, userCtx: UserCtx, id?: string): Promise<OpenedDatabase> {
    const opened = await this.#openWithAccess(db, userCtx);
    if (opened.caller.isMember || opened.hooks.some((hooks) => hooks.access?.readsWithoutMembership(opened.caller, id))) return opened;
    if (id !== undefined && opened.hooks.some((hooks) => hooks.access)) throw documentMissing();
    this.#requireMember(opened);
    return opened;
  }

  /**
   * For `_all_docs` and `_changes`. Those of `_users`, of the authentication database and of
   * `_replicator` list every user (or every credential), so they are for server admins only
   * (CouchDB 3); the path rule comes first, so no membership answer hints at who is listed.
   */
  async openListing(db: string, userCtx: UserCtx, scoped = false): Promise<OpenedDatabase> {
    if (db === this.usersDbName || db === '_users' || db === '_replicator') requireServerAdmin(userCtx);
    return scoped ? this.openScoped(db, userCtx) : this.open(db, userCtx);
  }

  /** The current winning revision of `id` for the server itself; undefined when missing or deleted. */
  async current(db: string, id: string): Promise<JsonObject | undefined> {
    const opened = await this.openAsServer(db);
    try {
      return (await opened.readDocument(id, undefined, {})).doc;
    } catch (error) {
      if (isCouchError(error) && error.status === 404) return undefined;
      throw error;
    }
  }

  async #openWithAccess(db: string, userCtx: UserCtx): Promise<OpenedDatabase> {
    const security = await securityOf(this.#context.storage, db);
    return new OpenedDatabase(db, security, callerOf(userCtx, security), this.#context);
  }

  #requireMember(opened: OpenedDatabase): void {
    if (!opened.caller.isMember) requireDbMember(opened.caller.userCtx, opened.security);
  }
}
