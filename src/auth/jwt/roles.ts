/**
 * Roles from a verified token (docs/jwt.md, "Roles"): `[jwt_auth] roles_claim_path` walks nested
 * objects, otherwise `[jwt_auth] roles_claim_name` names one top-level claim. Pure.
 *
 * @module
 */
import { jsonMismatch, malformedToken, missingJsonKey } from '../../errors/jwt-errors.js';

/** CouchDB's default `[jwt_auth] roles_claim_name` (deprecated since 3.3, still the default). */
export const DEFAULT_ROLES_CLAIM_NAME = '_couchdb.roles';

export interface RolesSource {
  /** Tokenised `roles_claim_path`; when set, `name` is ignored. */
  path?: readonly string[];
  /** `roles_claim_name`: one top-level key, dots included. */
  name: string;
}

/**
 * Splits `roles_claim_path` on every `.` not preceded by a backslash, then turns each `\.` into a
 * literal dot, as CouchDB does. Every string tokenises, odd ones (`<<foo`, `123456`) included.
 *
 * @example parseRolesClaimPath('foo.bar\\.zonk.roles') // ['foo', 'bar.zonk', 'roles']
 */
export function parseRolesClaimPath(path: string): string[] {
  return path.split(/(?<!\\)\./).map((segment) => segment.replaceAll('\\.', '.'));
}

/**
 * The caller's roles. With a path: a missing key answers 404 `missing json key: <key>` and a
 * non-object met on the way 404 `json_mismatch`. With a name: a missing claim means no roles.
 */
export function extractRoles(claims: Readonly<Record<string, unknown>>, source: RolesSource): string[] {
  if (source.path === undefined) {
    // hasOwn, not `in` or a plain read: `roles_claim_name = constructor` must not reach Object.prototype.
    return Object.hasOwn(claims, source.name) ? rolesFromValue(claims[source.name]) : [];
  }
  let current: unknown = claims;
  for (const key of source.path) {
    if (!isObject(current)) throw jsonMismatch();
    if (!Object.hasOwn(current, key)) throw missingJsonKey(key);
    current = current[key];
  }
  return rolesFromValue(current);
}

/**
 * An array of strings, or a comma-separated string whose parts are trimmed and whose empty parts
 * are dropped (`" a, ,b "` → `["a", "b"]`; CouchDB 3.4+ keeps inner empty parts and the
 * whitespace at either end of the string, which can only produce roles nobody meant). Anything else is 400
 * `Malformed token`: CouchDB crashes with a 500 on numbers, objects and null.
 */
export function rolesFromValue(value: unknown): string[] {
  if (typeof value === 'string') {
    return value
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== '');
  }
  if (Array.isArray(value) && value.every((role) => typeof role === 'string')) return [...(value as string[])];
  throw malformedToken();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
