import { badRequest } from '../errors/catalog.js';
import type { Json, SecurityObject } from '../storage/storage.js';

/** `_security` for a new database from `[couchdb] default_security`, as CouchDB 3. */
export function defaultSecurity(setting: string): SecurityObject {
  if (setting === 'everyone' || setting === 'admin_local') return {};
  return { members: { roles: ['_admin'] }, admins: { roles: ['_admin'] } };
}

function validateGroup(value: Json | undefined): void {
  if (value === undefined) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('admins or members must be a JSON list of strings');
  }
  for (const key of ['names', 'roles'] as const) {
    const list = value[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.some((item) => typeof item !== 'string')) {
      throw badRequest(`${key} must be a JSON list of strings`);
    }
  }
}

/**
 * CouchDB's checks on a `_security` body. CouchDB answers these with a 500; a wrong body is the
 * client's mistake, so Divan answers 400 with the same words.
 */
export function validateSecurity(body: unknown): SecurityObject {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('Security object must be a JSON object.');
  }
  const security = body as SecurityObject;
  validateGroup(security['admins']);
  validateGroup(security['members'] ?? security['readers']);
  return security;
}
