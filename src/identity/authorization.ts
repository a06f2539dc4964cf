import { notAServerAdmin, notAllowedForDb, notAuthorizedForDb, notADbOrServerAdmin } from '../errors/catalog.js';
import type { Json, JsonObject } from '../json/json.js';
import type { UserCtx } from './user-ctx.js';

/** A database's `_security` object as stored: only its `admins` and `members` (or `readers`) matter here. */
type SecurityObject = JsonObject;

/** CouchDB 3's authorization rules over a user context and a database's `_security`. */

export function isServerAdmin(userCtx: UserCtx): boolean {
  return userCtx.roles.includes('_admin');
}

export function requireServerAdmin(userCtx: UserCtx): void {
  if (!isServerAdmin(userCtx)) throw notAServerAdmin();
}

interface NamesAndRoles {
  names: string[];
  roles: string[];
}

function stringsOf(value: Json | undefined): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function readGroup(security: SecurityObject, key: 'admins' | 'members'): NamesAndRoles {
  // CouchDB still honours the pre-1.2 name `readers` for members.
  const value = security[key] ?? (key === 'members' ? security['readers'] : undefined);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { names: [], roles: [] };
  return { names: stringsOf(value['names']), roles: stringsOf(value['roles']) };
}

/**
 * The groups of each `_security` object seen, read once: the storage layers hand out the same
 * cached object for every request, and a `_security` change stores a new object (none is ever
 * changed in place), so an entry cannot go stale; it goes with its object.
 */
const groups = new WeakMap<SecurityObject, { admins: NamesAndRoles; members: NamesAndRoles }>();

function group(security: SecurityObject, key: 'admins' | 'members'): NamesAndRoles {
  let known = groups.get(security);
  if (known === undefined) {
    known = { admins: readGroup(security, 'admins'), members: readGroup(security, 'members') };
    groups.set(security, known);
  }
  return known[key];
}

function matches(userCtx: UserCtx, { names, roles }: NamesAndRoles): boolean {
  if (userCtx.name !== null && names.includes(userCtx.name)) return true;
  return userCtx.roles.some((role) => roles.includes(role));
}

export function isDbAdmin(userCtx: UserCtx, security: SecurityObject): boolean {
  return isServerAdmin(userCtx) || matches(userCtx, group(security, 'admins'));
}

/** Members: db admins, anyone when `members` is empty (a public database), or a name/role match. */
export function isDbMember(userCtx: UserCtx, security: SecurityObject): boolean {
  if (isDbAdmin(userCtx, security)) return true;
  const members = group(security, 'members');
  if (members.names.length === 0 && members.roles.length === 0) return true;
  return matches(userCtx, members);
}

export function requireDbMember(userCtx: UserCtx, security: SecurityObject): void {
  if (isDbMember(userCtx, security)) return;
  throw userCtx.name === null ? notAuthorizedForDb() : notAllowedForDb();
}

export function requireDbAdmin(userCtx: UserCtx, security: SecurityObject): void {
  if (!isDbAdmin(userCtx, security)) throw notADbOrServerAdmin();
}
