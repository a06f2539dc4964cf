/**
 * The database layer's part of the composition root (app.ts): the layer, its hooks in the order
 * their `beforeDocUpdate` steps run, and the services built on it.
 */
import { accessHooks } from '../databases/document-access.js';
import type { ClusterLink } from '../cluster/cluster-link.js';
import type { Config } from '../config/config.js';
import { ChangeNotifier } from '../databases/change-notifier.js';
import { Databases } from '../databases/databases.js';
import { HookRegistry } from '../databases/hook-registry.js';
import { PerUserDatabases } from '../databases/per-user.js';
import { defaultSecurity } from '../databases/security.js';
import { DesignDocCache } from '../design/design-docs.js';
import { JsSandbox } from '../js/sandbox.js';
import { sandboxSettings } from '../js/sandbox-settings.js';
import { validationHooks } from '../design/validation-hooks.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { meteredStorage } from './metered-storage.js';
import type { Storage } from '../storage/storage.js';
import { ActiveTasks } from '../tasks/active-tasks.js';
import { UserStore } from '../users/user-store.js';
import { UsersDatabase } from '../users/users-database.js';
import { usersDatabaseHooks } from '../users/users-hooks.js';

export interface DataLayer {
  /** The backend itself, for what is no database document (the cluster's shared cookie secret). */
  backend: Storage;
  databases: Databases;
  users: UsersDatabase;
  userStore: UserStore;
  changes: ChangeNotifier;
  perUser: PerUserDatabases;
  /** For capabilities wired later (the replicator) to add their databases' rules. */
  hooks: HookRegistry;
  /** Design-document JavaScript (validation, filters; views build on it). */
  sandbox: JsSandbox;
  designDocs: DesignDocCache;
}

/**
 * The database layer and its hooks, in the order their `beforeDocUpdate` steps run
 * (docs/architecture.md): the users-database rules, then the design documents' validate_doc_update
 * functions over the whole request; after a write, live feeds wake, cached credentials and design
 * documents drop (on every node), per-user databases follow.
 */
export async function wireData(config: Config, log: Logger, backend: Storage, link: ClusterLink | undefined, metrics: Metrics): Promise<DataLayer> {
  const hooks = new HookRegistry(log);
  const storage = meteredStorage(backend, metrics);
  const databases = new Databases({ storage, config, hooks, tasks: new ActiveTasks(() => config.getString('divan', 'node_name')) }, log);
  const users = new UsersDatabase(config);
  const userStore = new UserStore(storage, config);
  const changes = new ChangeNotifier();
  if (link) changes.connect((dbs) => link.publish({ topic: 'db', dbs }));
  const perUser = new PerUserDatabases(config, log, databases, (db: string): boolean => db === users.name);
  const sandbox = new JsSandbox(sandboxSettings(config, log));
  metrics.watchSandbox(() => sandbox.held());
  const designDocs = new DesignDocCache(backend);
  const publish = (db: string): void => link?.publish({ topic: 'ddocs', db });
  hooks.register(accessHooks());
  hooks.register(validationHooks({ sandbox, designDocs, isUsersDb: (db) => users.isUsersDb(db), publish }));
  hooks.register(usersDatabaseHooks(users, (written) => {
    userStore.invalidate(written.ids);
    link?.publish({ topic: 'users', ids: written.ids });
  }));
  hooks.register({ name: 'live _changes feeds', appliesTo: () => true, afterWrite: (written) => changes.changed(written.db) });
  hooks.register({ name: 'metrics', appliesTo: () => true, afterWrite: (written) => metrics.documentsWritten(written.ids === 'all' ? 1 : written.ids.length) });
  hooks.register(perUser.hooks());
  await databases.ensure(users.name, defaultSecurity('admin_only'));
  return { backend, databases, users, userStore, changes, perUser, hooks, sandbox, designDocs };
}
