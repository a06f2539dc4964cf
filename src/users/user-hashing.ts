import { PBKDF2_PRFS, pbkdf2Hex, randomHex, sha1Hex } from '../crypto/crypto.js';
import { badRequest, forbidden } from '../errors/catalog.js';
import type { CouchError } from '../errors/couch-error.js';
import type { Json, JsonObject } from '../storage/storage.js';
import { own } from './user-json.js';
import { parsePasswordRegexp } from './user-password-regexp.js';

/** From `[chttpd_auth] password_scheme, pbkdf2_prf, iterations, password_regexp, max_iterations`. */
export interface HashSettings {
  scheme: string;
  prf: string;
  iterations: number;
  passwordRegexp: string;
  /** The most iterations a non-admin may store in a hash of their own (absent: the default limit). */
  maxIterations?: number;
}

/** Removed from the body before the new hash fields are prepended (couch_users_db `not_password_field`). */
const PASSWORD_FIELDS: ReadonlySet<string> = new Set([
  'password',
  'password_scheme',
  'password_sha',
  'pbkdf2_prf',
  'salt',
  'iterations',
  'derived_key',
  'preserve_salt',
]);

const cannotHash = (): CouchError => forbidden('Server cannot hash passwords at this time.');
const REQUIREMENT_ERROR = 'Password does not conform to requirements.';

/** A password write with its hash fields in place and the PBKDF2 still to do. */
interface PlannedPasswordHash {
  /** The document as it will be stored; its `derived_key` is filled in by `complete`. */
  readonly doc: JsonObject;
  /** Runs the slow derivation (if any) into `doc` and answers that same object. */
  complete(): Promise<JsonObject>;
}

/**
 * The hashing half of CouchDB's `before_doc_update` for the users db, split so that the document
 * can be validated before any PBKDF2 is spent on it: a string `password` is replaced by the
 * configured hash fields (with the derived key still empty); an absent or null one leaves the
 * document untouched (the same object is kept). Any writer gets this, admins included.
 *
 * @example const planned = planPasswordHash({ _id: 'org.couchdb.user:bob', name: 'bob', password: 'pw' }, settings)
 * // planned.doc → { _id, password_scheme: 'pbkdf2', pbkdf2_prf: 'sha256', salt, iterations, derived_key: '', name: 'bob' }
 * // await planned.complete() → the same object with its derived_key
 */
export function planPasswordHash(doc: JsonObject, settings: HashSettings): PlannedPasswordHash {
  const password = own(doc, 'password');
  if (password === undefined || password === null) return { doc, complete: async () => doc };
  if (settings.scheme !== 'simple' && settings.scheme !== 'pbkdf2') throw cannotHash();
  const requirements = parsePasswordRegexp(settings.passwordRegexp);
  if (requirements === undefined) throw cannotHash();
  // CouchDB would crash inside re:run on a non-string; the hashing error it gives without
  // requirements is the better answer in both cases.
  if (typeof password !== 'string') throw forbidden(`Password value of '${JSON.stringify(password)}' is invalid.`);
  for (const { regex, reason } of requirements) {
    if (!regex.test(password)) throw badRequest(reason === undefined ? REQUIREMENT_ERROR : `${REQUIREMENT_ERROR} ${reason}`);
  }

  // The hash-upgrade writer keeps the salt so that sessions (keyed by salt) survive the rewrite.
  const given = own(doc, 'salt');
  const salt = own(doc, 'preserve_salt') === true && typeof given === 'string' ? given : randomHex();
  let hashFields: [string, Json][];
  let derive: ((planned: JsonObject) => Promise<void>) | undefined;
  if (settings.scheme === 'simple') {
    hashFields = [
      ['password_scheme', 'simple'],
      ['salt', salt],
      ['password_sha', sha1Hex(password + salt)],
    ];
  } else {
    const digest = PBKDF2_PRFS.get(settings.prf);
    const { iterations } = settings;
    // CouchDB crashes on these (500); refusing to hash keeps a misconfiguration from storing junk.
    if (digest === undefined || !Number.isSafeInteger(iterations) || iterations < 1) throw cannotHash();
    hashFields = [
      ['password_scheme', 'pbkdf2'],
      ['pbkdf2_prf', settings.prf],
      ['salt', salt],
      ['iterations', iterations],
      ['derived_key', ''],
    ];
    derive = async (planned) => {
      planned['derived_key'] = await pbkdf2Hex(password, salt, iterations, digest);
    };
  }

  // CouchDB prepends to the body, which never holds the `_` members; keeping those first makes the
  // stored body read back as `_id, _rev, password_scheme, …, rest`.
  const entries = Object.entries(doc);
  const special = entries.filter(([key]) => key.startsWith('_'));
  const rest = entries.filter(([key]) => !key.startsWith('_') && !PASSWORD_FIELDS.has(key));
  const planned = Object.fromEntries([...special, ...hashFields, ...rest]) as JsonObject;
  return {
    doc: planned,
    async complete() {
      await derive?.(planned);
      return planned;
    },
  };
}
