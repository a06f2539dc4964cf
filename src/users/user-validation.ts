import type { UserCtx } from '../identity/user-ctx.js';
import { isAcceptableUserName } from '../identity/user-name.js';
import { forbidden, userNameForbidden } from '../errors/catalog.js';
import type { Json, JsonObject } from '../storage/storage.js';
import { totpProblem } from './totp.js';
import { jsString, own } from './user-json.js';

const USER_PREFIX = 'org.couchdb.user:';
const SCHEMES: readonly Json[] = ['simple', 'pbkdf2', 'simple+pbkdf2'];

/**
 * The `validate_doc_update` of CouchDB's `_design/_auth`, check for check and message for message
 * (docs/authentication.md, "Validation of `_users` documents"). It runs on the document as it will
 * be stored, i.e. after password hashing.
 *
 * | writer            | create                        | update                                    | delete            |
 * |-------------------|-------------------------------|-------------------------------------------|-------------------|
 * | `_admin` role     | any roles but system ones     | same                                      | any doc           |
 * | db/server admin   | any roles but system ones     | same                                      | only own doc (*)  |
 * | other (anonymous) | roles must be `[]`            | only own doc, sorted roles unchanged      | only own doc      |
 *
 * (*) CouchDB's function tests the `_admin` role for deletes, not the security object.
 *
 * A `totp` member, when present and not null, must be a usable second factor (see totp.ts for the
 * reasons); CouchDB's function does not look at it. A name with control characters or unpaired
 * surrogates is refused last (see identity/user-name.ts); CouchDB accepts any characters but `:`.
 *
 * Two places differ from the JavaScript on purpose, where it would crash or accept nonsense:
 * a `name` that is not a string is "doc.name is required" (an array `["bob"]` would otherwise
 * pass as `bob`), and a delete needs a non-null name equal to the old doc's (JS `==` lets an
 * anonymous caller delete a doc that has no `name`).
 */
export function validateUserDoc(newDoc: JsonObject, oldDoc: JsonObject | undefined, userCtx: UserCtx, isAdmin: boolean): void {
  if (own(newDoc, '_deleted') === true) {
    if (userCtx.roles.includes('_admin')) return;
    if (oldDoc !== undefined && userCtx.name !== null && userCtx.name === own(oldDoc, 'name')) return;
    throw forbidden('Only admins may delete other user docs.');
  }
  const { name, roles } = checkShape(newDoc, oldDoc);
  checkCredentials(newDoc);
  checkRoleChange(name, roles, oldDoc, userCtx, isAdmin);
  if (name.startsWith('_')) throw forbidden('Username may not start with underscore.');
  if (name.includes(':')) throw forbidden('Character `:` is not allowed in usernames.');
  // Divan's addition: names that would share a per-user database or rewrite a log line (user-name.ts).
  if (!isAcceptableUserName(name)) throw userNameForbidden();
}

/** The members every user document has: type, name, roles and the `_id` that follows from the name. */
function checkShape(newDoc: JsonObject, oldDoc: JsonObject | undefined): { name: string; roles: string[] } {
  if (own(newDoc, 'type') !== 'user') throw forbidden('doc.type must be user');

  const name = own(newDoc, 'name');
  if (typeof name !== 'string' || name === '') throw forbidden('doc.name is required');

  const roles = own(newDoc, 'roles');
  if (!truthy(roles)) throw forbidden('doc.roles must exist');
  if (!Array.isArray(roles)) throw forbidden('doc.roles must be an array');
  if (!roles.every((role): role is string => typeof role === 'string')) {
    throw forbidden('doc.roles can only contain strings');
  }

  if (own(newDoc, '_id') !== USER_PREFIX + name) throw forbidden('Doc ID must be of the form org.couchdb.user:name');

  if (oldDoc !== undefined && own(oldDoc, 'name') !== name) throw forbidden('Usernames can not be changed.');
  return { name, roles };
}

/** The stored password hash and second factor, as far as the document itself can tell. */
function checkCredentials(newDoc: JsonObject): void {
  if (truthy(own(newDoc, 'password_sha')) && !truthy(own(newDoc, 'salt'))) {
    // The missing space is CouchDB's; clients may match the exact text.
    throw forbidden('Users with password_sha must have a salt.See /_utils/script/couch.js for example code.');
  }

  const scheme = own(newDoc, 'password_scheme');
  if (truthy(scheme) && !SCHEMES.includes(scheme as Json)) {
    throw forbidden(`Password scheme \`${jsString(scheme)}\` not supported.`);
  }
  if (scheme === 'pbkdf2') {
    if (typeof own(newDoc, 'iterations') !== 'number') throw forbidden('iterations must be a number.');
    if (typeof own(newDoc, 'derived_key') !== 'string') throw forbidden('derived_key must be a string.');
  }

  // Divan's addition (CouchDB accepts any `totp` and fails at login): a second factor that can
  // never match would lock the user out, so it is refused when written.
  const totp = totpProblem(own(newDoc, 'totp'));
  if (totp !== undefined) throw forbidden(totp);
}

/** Who may write whose document with which roles. */
function checkRoleChange(name: string, roles: readonly string[], oldDoc: JsonObject | undefined, userCtx: UserCtx, isAdmin: boolean): void {
  if (!isAdmin) {
    if (oldDoc !== undefined) {
      if (userCtx.name !== name) throw forbidden('You may only update your own user document.');
      if (!sameRoles(own(oldDoc, 'roles'), roles)) throw forbidden('Only _admin may edit roles');
    } else if (roles.length > 0) {
      throw forbidden('Only _admin may set roles');
    }
  }

  for (const role of roles) {
    if (role !== '_metrics' && role.startsWith('_')) {
      throw forbidden('No system roles (starting with underscore) in users db.');
    }
  }
}

/** `(oldDoc.roles || []).sort()` against `newDoc.roles.sort()`, on copies: the stored order is the user's. */
function sameRoles(oldValue: Json | undefined, newRoles: readonly string[]): boolean {
  const oldRoles = truthy(oldValue) ? oldValue : [];
  // An old value that is not a list of strings cannot equal the new, validated list.
  if (!Array.isArray(oldRoles) || !oldRoles.every((role) => typeof role === 'string')) return false;
  if (oldRoles.length !== newRoles.length) return false;
  const before = [...(oldRoles as string[])].sort();
  const after = [...newRoles].sort();
  return before.every((role, index) => role === after[index]);
}

/** JavaScript truthiness of a JSON value (the JS function tests members with `!x`). */
function truthy(value: Json | undefined): value is Json {
  return value !== undefined && value !== null && value !== false && value !== 0 && value !== '';
}
