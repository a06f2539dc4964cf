/** Every storage backend `[divan] storage` may name: adding one is its folder and one line here. */
import type { StorageBackend } from '../storage/backend.js';
import { postgresBackend } from '../storage/postgres/postgres-backend.js';
import { sqliteBackend } from '../storage/sqlite/sqlite-backend.js';

export const STORAGE_BACKENDS: readonly StorageBackend[] = [sqliteBackend, postgresBackend];
