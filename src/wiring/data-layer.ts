/**
 * The database layer's part of the composition root (app.ts): the layer, its hooks in the order
 * their `beforeDocUpdate` steps run, and the services built on it.
 */
import type { ClusterLink } from '../cluster/cluster-link.js';
import type { Config } from '../config/config.js';
import { ChangeNotifier } from '../databases/change-notifier.js';
import { Databases } from '../databases/databases.js';
import { HookRegistry } from '../databases/hook-registry.js';
import { PerUserDatabases } from '../databases/per-user.js';
import { defaultSecurity } from '../databases/security.js';
import { unrunValidationHooks } from '../databases/unrun-validation.js';
import type { Logger } from '../log/logger.js';
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
}

/**
 * The database layer and its hooks, in the order their `beforeDocUpdate` steps run
 * (docs/architecture.md): the fail-closed validate_doc_update refusal first (it costs no password
 * hash), then the users-database rules; after a write, live feeds wake, cached credentials drop
 * (on every node), per-user databases follow.
 */
export async function wireData(config: Config, log: Logger, backend: Storage, link: ClusterLink | undefined): Promise<DataLayer> {
  const hooks = new HookRegistry(log);
  const databases = new Databases({ storage: backend, config, hooks, tasks: new ActiveTasks(() => config.getString('divan', 'node_name')) }, log);
  const users = new UsersDatabase(config);
  const userStore = new UserStore(backend, config);
  const changes = new ChangeNotifier();
  if (link) changes.connect((dbs) => link.publish({ topic: 'db', dbs }));
  const perUser = new PerUserDatabases(config, log, databases, (db: string): boolean => db === users.name);
  hooks.register(unrunValidationHooks(backend, (db) => users.isUsersDb(db)));
  hooks.register(usersDatabaseHooks(users, (written) => {
    userStore.invalidate(written.ids);
    link?.publish({ topic: 'users', ids: written.ids });
  }));
  hooks.register({ name: 'live _changes feeds', appliesTo: () => true, afterWrite: (written) => changes.changed(written.db) });
  hooks.register(perUser.hooks());
  await databases.ensure(users.name, defaultSecurity('admin_only'));
  return { backend, databases, users, userStore, changes, perUser, hooks };
}
