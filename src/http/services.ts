import type { AuthChain } from '../auth/chain.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import type { Storage } from '../storage/storage.js';
import type { Admins } from '../users/admins.js';
import type { Reply } from './reply.js';
import type { Request } from './request.js';

/** What endpoints may use: services and settings, never a backend or SQL. */
export interface Services {
  readonly config: Config;
  readonly storage: Storage;
  readonly admins: Admins;
  readonly log: Logger;
  /** The Divan release, for `vendor.version`. */
  readonly version: string;
  /** The node's name, for `/_membership` and `/_node/{name}`. */
  nodeName(): string;
  /** The current authentication chain (rebuilt when `[chttpd] authentication_handlers` changes). */
  chain(): AuthChain;
}

export type Endpoint = (request: Request, services: Services) => Promise<Reply>;
