import { isDbAdmin } from '../identity/authorization.js';
import type { UserCtx } from '../identity/user-ctx.js';
import { forbidden } from '../errors/catalog.js';
import type { CouchError } from '../errors/couch-error.js';
import type { SecurityObject, Storage } from '../storage/storage.js';

/**
 * Divan stores design documents' `validate_doc_update` functions but cannot run them yet. An app
 * moved from CouchDB relies on them to refuse writes, so ignoring them would silently open the
 * database: until they run, a write by anyone but a database admin is refused (fail closed).
 * Database admins pass because they could remove the function anyway.
 */

/** `_design/_auth` of a users database is CouchDB's own, which Divan runs natively (users/). */
const NATIVE_VALIDATION = '_design/_auth';

/** Ids of the design documents of `db` whose winning revision holds a `validate_doc_update`. */
export async function designDocsWithValidation(storage: Storage, db: string, usersDb: boolean): Promise<string[]> {
  // `0` sorts right after `/`, so this range is exactly the ids that start with `_design/`.
  const { rows } = await storage.listDocuments(db, { startKey: '_design/', endKey: '_design0', inclusiveEnd: false, includeDocs: true });
  return rows
    .filter((row) => !row.deleted && row.body?.['validate_doc_update'] !== undefined)
    .map((row) => row.id)
    .filter((id) => !(usersDb && id === NATIVE_VALIDATION));
}

/** The refusal for a normal document write by a non-admin, or undefined when the write may go on. */
export async function unrunValidationRefusal(
  storage: Storage,
  db: string,
  userCtx: UserCtx,
  security: SecurityObject,
  usersDb = false,
): Promise<CouchError | undefined> {
  if (isDbAdmin(userCtx, security)) return undefined;
  const holders = await designDocsWithValidation(storage, db, usersDb);
  if (holders.length === 0) return undefined;
  return forbidden(
    `Only database admins may write here: ${holders.join(', ')} has a validate_doc_update function, which this server does not run yet.`,
  );
}
