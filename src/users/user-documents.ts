import type { UserCtx } from '../identity/user-ctx.js';
import { notFound, notADbOrServerAdmin, usersDesignDocsForAdmins } from '../errors/catalog.js';
import type { JsonObject } from '../storage/storage.js';
import type { PasswordHash } from './password-hash.js';
import { totpSettings, type TotpSettings } from './totp.js';
import { planPasswordHash, type HashSettings } from './user-hashing.js';
import { DEFAULT_MAX_ITERATIONS, refuseCostlyHash } from './hash-cost.js';
import { isJsonObject, own } from './user-json.js';
import { validateUserDoc } from './user-validation.js';

export type { HashSettings } from './user-hashing.js';

export const USER_PREFIX = 'org.couchdb.user:';

export interface WriterContext {
  userCtx: UserCtx;
  /** server admin or admin of the users db (by name or role) */
  isAdmin: boolean;
}

/** Credentials of a user doc for authentication. */
export interface UserCredentials {
  name: string;
  roles: string[];
  hash: PasswordHash;
  /** Users with a `totp` object can never authenticate with Basic, and need a code on /_session. */
  hasTotp: boolean;
  /**
   * The second factor's settings; absent when `hasTotp` is false, and also when the stored `totp`
   * object is unusable (then no code ever matches: such a user cannot log in until it is fixed).
   */
  totp?: TotpSettings;
  /** Present for credentials read from a stored doc: only those are ever hash-upgraded. */
  rev?: string;
}

/**
 * The name a user doc id stands for; undefined for other ids.
 *
 * @example userNameFromId('org.couchdb.user:bob') // → 'bob'
 */
export function userNameFromId(id: string): string | undefined {
  return id.startsWith(USER_PREFIX) ? id.slice(USER_PREFIX.length) : undefined;
}

/**
 * CouchDB's `before_doc_update` for the users db followed by `_design/_auth`'s
 * `validate_doc_update`, in CouchDB's order (docs/authentication.md, "Validation of `_users` documents"):
 *
 * | step | rule                                                                   | failure                    |
 * |------|------------------------------------------------------------------------|----------------------------|
 * | 1    | writer is admin, anonymous, or named like the doc id                   | 404 not_found `missing`    |
 * | 2    | a string `password` gets hash fields (regexps first); null/absent: kept | 400 / 403                 |
 * | 3    | `_design/…`: admins only, no validation function (as couch_db)         | 401 / 403                  |
 * | 4    | the validation function, on the doc with its hash fields               | 403 forbidden              |
 * | 5    | non-admins: a stored hash may not cost more than `max_iterations`      | 403 forbidden              |
 * | 6    | only now the PBKDF2 derivation, so a refused write costs none          | 503 when the queue is full |
 *
 * `doc` is the full incoming object, parsed ONCE with `JSON.parse` (last duplicate key wins, the
 * CVE-2017-12635 fix); the object returned is the one validated, and is what must be stored.
 * `oldDoc` is the current revision rendered with `_id`/`_rev`, or undefined when creating or when
 * that revision is deleted. `_local/` documents get no hook at all, as in CouchDB.
 *
 * @example
 * const stored = await prepareUserWrite(JSON.parse(body), undefined, { userCtx: ANONYMOUS, isAdmin: false }, settings)
 */
export async function prepareUserWrite(
  doc: JsonObject,
  oldDoc: JsonObject | undefined,
  writer: WriterContext,
  settings: HashSettings,
): Promise<JsonObject> {
  const id = own(doc, '_id');
  const docId = typeof id === 'string' ? id : '';
  if (docId.startsWith('_local/')) return doc;

  const writerName = writer.userCtx.name;
  // Anonymous writers pass so that signup works; the validation function then stops them from
  // touching existing docs.
  if (!writer.isAdmin && writerName !== null && writerName !== userNameFromId(docId)) throw notFound('missing');

  const hashed = planPasswordHash(doc, settings);

  if (docId.startsWith('_design/')) {
    // Only an anonymous non-admin gets here: a named one was answered 404 above.
    if (!writer.isAdmin) throw notADbOrServerAdmin();
    return hashed.complete();
  }

  validateUserDoc(hashed.doc, oldDoc, writer.userCtx, writer.isAdmin);
  if (!writer.isAdmin) refuseCostlyHash(hashed.doc, settings.maxIterations ?? DEFAULT_MAX_ITERATIONS);
  return hashed.complete();
}

/** Never public, whatever `public_fields` says: the TOTP secret is as private as the password. */
const PRIVATE_FIELDS: ReadonlySet<string> = new Set(['totp']);

/**
 * What a reader may see of a user doc (CouchDB's `after_doc_read`): everything for admins and the
 * owner; otherwise `_id`, `_rev` and the `[chttpd_auth] public_fields` (never `totp`), or undefined
 * (answer 404 `missing`) when no field would remain. Design docs are for admins only: 403.
 *
 * @example filterUserRead(doc, { userCtx: { name: 'eve', roles: [] }, isAdmin: false }, ['name']) // → { _id, _rev, name }
 */
export function filterUserRead(
  doc: JsonObject,
  reader: { userCtx: UserCtx; isAdmin: boolean },
  publicFields: readonly string[],
): JsonObject | undefined {
  const id = own(doc, '_id');
  const docId = typeof id === 'string' ? id : '';
  if (docId.startsWith('_design/')) {
    if (reader.isAdmin) return doc;
    throw usersDesignDocsForAdmins();
  }
  if (reader.isAdmin) return doc;
  if (reader.userCtx.name !== null && reader.userCtx.name === userNameFromId(docId)) return doc;

  const visible = publicMembers(publicFields);
  const entries = Object.entries(doc).filter(([key]) => key === '_id' || key === '_rev' || visible.has(key));
  if (!entries.some(([key]) => key !== '_id' && key !== '_rev')) return undefined;
  return Object.fromEntries(entries) as JsonObject;
}

/** The members of a user doc that `public_fields` shows to every reader (never `totp`, never `_…`). */
function publicMembers(publicFields: readonly string[]): Set<string> {
  return new Set(publicFields.map((field) => field.trim()).filter((field) => field !== '' && !field.startsWith('_') && !PRIVATE_FIELDS.has(field)));
}

/** What a listing row tells anyway, so what a listed document keeps whoever reads it. */
const ROW_MEMBERS: readonly string[] = ['_id', '_rev', '_deleted', '_conflicts'];

/**
 * The top-level members that every listed user doc shows this reader as stored (`listedUserDoc`):
 * all of them for admins; otherwise the row's members and the public fields. Queries order and
 * select by these only, so that no index, sort or bookmark tells a hidden value.
 */
export function listedMembersAsStored(reader: { isAdmin: boolean }, publicFields: readonly string[]): (member: string) => boolean {
  if (reader.isAdmin) return () => true;
  const shown = new Set([...ROW_MEMBERS, ...publicMembers(publicFields)]);
  return (member) => shown.has(member);
}

/**
 * A user doc inside a listing (`_all_docs` or `_changes` with `include_docs`): what
 * `filterUserRead` shows, and where it would answer 404 or 403 (no public field; a design doc for
 * a non-admin), only the members the row itself already tells (id, revision, deleted, conflicts).
 *
 * @example listedUserDoc(doc, { userCtx: { name: 'eve', roles: [] }, isAdmin: false }, []) // → { _id, _rev }
 */
export function listedUserDoc(
  doc: JsonObject,
  reader: { userCtx: UserCtx; isAdmin: boolean },
  publicFields: readonly string[],
): JsonObject {
  const id = own(doc, '_id');
  const hiddenDesign = typeof id === 'string' && id.startsWith('_design/') && !reader.isAdmin;
  const visible = hiddenDesign ? undefined : filterUserRead(doc, reader, publicFields);
  if (visible === doc) return doc;
  const row = Object.entries(doc).filter(([key]) => ROW_MEMBERS.includes(key));
  return Object.fromEntries([...row, ...Object.entries(visible ?? {})]) as JsonObject;
}

/**
 * The stored hash of a user doc, as `get_user_creds` reads it; undefined when it has none this
 * server can check (no or malformed hash fields, an unknown scheme).
 *
 * @example credentialsFromDoc({ _id: 'org.couchdb.user:bob', name: 'bob', roles: ['x'], password_scheme: 'pbkdf2', … })
 */
export function credentialsFromDoc(doc: JsonObject): UserCredentials | undefined {
  const hash = hashFromDoc(doc);
  if (!hash) return undefined;
  const docName = own(doc, 'name');
  const id = own(doc, '_id');
  const name =
    typeof docName === 'string' && docName !== ''
      ? docName
      : typeof id === 'string'
        ? (userNameFromId(id) ?? id)
        : undefined;
  if (name === undefined) return undefined;
  const roles = own(doc, 'roles');
  const credentials: UserCredentials = {
    name,
    roles: Array.isArray(roles) ? roles.filter((role): role is string => typeof role === 'string') : [],
    hash,
    hasTotp: isJsonObject(own(doc, 'totp')),
  };
  const totp = credentials.hasTotp ? totpSettings(own(doc, 'totp')) : undefined;
  if (totp) credentials.totp = totp;
  const rev = own(doc, '_rev');
  if (typeof rev === 'string') credentials.rev = rev;
  return credentials;
}

function hashFromDoc(doc: JsonObject): PasswordHash | undefined {
  const scheme = own(doc, 'password_scheme') ?? 'simple';
  const salt = own(doc, 'salt');
  if (typeof salt !== 'string') return undefined;
  if (scheme === 'simple') {
    const passwordSha = own(doc, 'password_sha');
    return typeof passwordSha === 'string' ? { scheme, salt, passwordSha: passwordSha.toLowerCase() } : undefined;
  }
  if (scheme !== 'pbkdf2' && scheme !== 'simple+pbkdf2') return undefined;
  const derivedKey = own(doc, 'derived_key');
  const iterations = own(doc, 'iterations') ?? 10000;
  const prf = own(doc, 'pbkdf2_prf') ?? 'sha';
  // CouchDB crashes (500) on a non-integer count; "no usable hash" is the safer answer.
  if (typeof derivedKey !== 'string' || typeof prf !== 'string' || typeof iterations !== 'number') return undefined;
  if (!Number.isSafeInteger(iterations)) return undefined;
  return { scheme, salt, derivedKey: derivedKey.toLowerCase(), iterations, prf };
}

/**
 * CouchDB's `needs_upgrade` (docs/authentication.md, "Hash upgrade on login"): whether a successful login should rewrite the stored
 * hash (as admin, with the plaintext password and `preserve_salt: true`). A stored pbkdf2 hash
 * without `pbkdf2_prf` counts as `sha`.
 *
 * @example needsHashUpgrade(credentials, { scheme: 'pbkdf2', prf: 'sha256', iterations: 600000, passwordRegexp: '' })
 */
export function needsHashUpgrade(credentials: UserCredentials, settings: HashSettings): boolean {
  const { hash } = credentials;
  if (settings.scheme === 'simple' && hash.scheme === 'simple') return false;
  if (settings.scheme === 'pbkdf2' && hash.scheme === 'pbkdf2') {
    return !(hash.iterations === settings.iterations && hash.prf === settings.prf);
  }
  return true;
}
