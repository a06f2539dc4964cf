/** CouchDB's database name rule, plus the system databases that start with `_`. */
const DB_NAME = /^[a-z][a-z0-9_$()+/-]*$/;
const SYSTEM_DATABASES = new Set(['_users', '_replicator', '_global_changes']);
const MAX_LENGTH = 238;

export function isValidDatabaseName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_LENGTH) return false;
  return DB_NAME.test(name) || SYSTEM_DATABASES.has(name);
}
