/**
 * The PostgreSQL backend as `[divan] storage = postgres` selects it: the database at
 * `DIVAN_POSTGRES_URL` or `[divan] postgres_url`, in schema `[divan] postgres_schema`, which
 * several servers may share.
 */
import type { StorageBackend } from '../backend.js';
import { openPostgresStorage } from './postgres-storage.js';

export const postgresBackend: StorageBackend = {
  name: 'postgres',
  capabilities: { sharedByServers: true },
  async open({ config, env, warn }) {
    const url = env['DIVAN_POSTGRES_URL'] ?? config.get('divan', 'postgres_url');
    if (url === undefined || url === '') throw new Error('[divan] storage = postgres needs [divan] postgres_url or DIVAN_POSTGRES_URL');
    const schema = config.getString('divan', 'postgres_schema');
    const storage = await openPostgresStorage({ url, schema, onError: (error) => warn(`PostgreSQL connection lost: ${error.message}`) });
    return { storage, meetingPoint: { url, schema } };
  },
};
