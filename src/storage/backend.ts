/**
 * A storage backend as `[divan] storage` selects it: one per backend folder (`sqlite/`, `postgres/`),
 * listed once in `src/wiring/storage-backends.ts`. What differs between backends and matters above
 * storage is declared here as capabilities, so no caller asks which backend it has.
 */
import type { Config } from '../config/config.js';
import type { NamedLocks } from '../locks/named-locks.js';
import type { Storage } from './storage.js';

export interface StorageBackend {
  /** The `[divan] storage` value that selects it. */
  readonly name: string;
  readonly capabilities: StorageCapabilities;
  /** Opens the store (creating or migrating its schema); rejects with a one-line reason. */
  open(place: StoragePlace): Promise<OpenedStorage>;
}

interface StorageCapabilities {
  /**
   * Servers on other machines may open the same store. Their shared state (the generated cookie
   * secret) then lives in the store, not in one server's configuration file.
   */
  sharedByServers: boolean;
}

/** Where a backend finds its settings and what the server gives it. */
interface StoragePlace {
  config: Config;
  dataDir: string;
  env: Readonly<Record<string, string | undefined>>;
  warn(message: string): void;
  /** Locks shared by the processes of this server (the SQLite write lease); in memory by default. */
  locks?: NamedLocks;
}

export interface OpenedStorage {
  storage: Storage;
  /**
   * The PostgreSQL database where the servers sharing this store meet: the cluster bus
   * (`LISTEN/NOTIFY`) and the shared lockout run over it. Absent for a store of one server.
   */
  meetingPoint?: { url: string; schema: string };
}
