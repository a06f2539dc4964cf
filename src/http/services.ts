import type { AuthChain } from '../auth/chain.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import type { Storage } from '../storage/storage.js';
import type { ChangeNotifier } from '../storage/change-notifier.js';
import type { CookieService } from '../auth/cookie/cookie-service.js';
import type { Admins } from '../users/admins.js';
import type { PasswordAuthenticator } from '../users/password-authenticator.js';
import type { UsersDatabase } from '../users/users-database.js';
import type { Reply } from './reply.js';
import type { Request } from './request.js';

/** What endpoints may use: services and settings, never a backend or SQL. */
export interface Services {
  readonly config: Config;
  readonly storage: Storage;
  readonly admins: Admins;
  readonly users: UsersDatabase;
  readonly authenticator: PasswordAuthenticator;
  readonly cookies: CookieService;
  readonly log: Logger;
  /** Wakes live `_changes` feeds when a database changes (on this node or, on a cluster, another). */
  readonly changes: ChangeNotifier;
  /** The Divan release, for `vendor.version`. */
  readonly version: string;
  /** The node's name, for `/_membership` and `/_node/{name}`. */
  nodeName(): string;
  /** The current authentication chain (rebuilt when `[chttpd] authentication_handlers` changes). */
  chain(): AuthChain;
}

export type Endpoint = (request: Request, services: Services) => Promise<Reply>;
