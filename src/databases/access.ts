import { isDbAdmin, isDbMember, isServerAdmin, requireDbMember } from '../identity/authorization.js';
import type { UserCtx } from '../identity/user-ctx.js';
import type { Caller } from '../documents/database-hooks.js';
import { databaseMissing } from '../errors/catalog.js';
import type { SecurityObject, Storage } from '../storage/storage.js';

/** Loads a database's `_security`, 404 when the database does not exist. */
export async function securityOf(storage: Storage, db: string): Promise<SecurityObject> {
  const security = await storage.getSecurity(db);
  if (security === undefined) throw databaseMissing();
  return security;
}

/** Opens a database for a member: 404 first (as CouchDB), then 401/403. */
export async function openAsMember(storage: Storage, db: string, userCtx: UserCtx): Promise<SecurityObject> {
  const security = await securityOf(storage, db);
  if (!isServerAdmin(userCtx)) requireDbMember(userCtx, security);
  return security;
}

export function callerOf(userCtx: UserCtx, security: SecurityObject): Caller {
  return { userCtx, isAdmin: isDbAdmin(userCtx, security), isMember: isDbMember(userCtx, security) };
}
