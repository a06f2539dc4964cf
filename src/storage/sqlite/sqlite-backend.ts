/** The SQLite backend as `[divan] storage = sqlite` selects it: one file under the data directory. */
import { join } from 'node:path';
import type { StorageBackend } from '../backend.js';
import { openSqliteStorage } from './sqlite-storage.js';

export const sqliteBackend: StorageBackend = {
  name: 'sqlite',
  capabilities: { sharedByServers: false },
  open: async ({ dataDir, locks }) => ({ storage: openSqliteStorage(join(dataDir, 'divan.sqlite'), locks) }),
};
