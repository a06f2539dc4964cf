/**
 * The store `[divan] storage` names, from the registry (storage-backends.ts), and when servers may
 * share it, the cluster bus at their meeting point so that they hear each other's writes.
 */
import type { ClusterBus } from '../cluster/cluster-bus.js';
import { openPostgresBus } from '../cluster/pg-bus.js';
import type { Config } from '../config/config.js';
import { StartupError } from '../errors/startup-error.js';
import type { NamedLocks } from '../locks/named-locks.js';
import type { Logger } from '../log/logger.js';
import type { OpenedStorage, StorageBackend } from '../storage/backend.js';
import { STORAGE_BACKENDS } from './storage-backends.js';

interface WiredStorage extends OpenedStorage {
  backend: StorageBackend;
  bus?: ClusterBus;
}

interface StorageOptions {
  env: Readonly<Record<string, string | undefined>>;
  nodeId?: string;
  locks?: NamedLocks;
}

/** Opens the configured store; every failure is a `StartupError` with a one-line reason. */
export async function openStorage(config: Config, dataDir: string, log: Logger, { env, nodeId, locks }: StorageOptions): Promise<WiredStorage> {
  const backend = selectedBackend(config);
  try {
    const opened = await backend.open({ config, dataDir, env, locks, warn: (message) => log.warning(message) });
    if (opened.meetingPoint === undefined) return { ...opened, backend };
    try {
      const bus = await openPostgresBus({ ...opened.meetingPoint, nodeId, onError: (message) => log.warning(message) });
      return { ...opened, backend, bus };
    } catch (error) {
      await opened.storage.close();
      throw error;
    }
  } catch (error) {
    throw new StartupError((error as Error).message);
  }
}

function selectedBackend(config: Config): StorageBackend {
  const name = config.getString('divan', 'storage');
  const backend = STORAGE_BACKENDS.find((each) => each.name === name);
  if (backend !== undefined) return backend;
  const names = STORAGE_BACKENDS.map((each) => each.name).join(' or ');
  throw new StartupError(`[divan] storage must be ${names}, not ${JSON.stringify(name)}`);
}
