import type { DatabaseHooks } from '../documents/database-hooks.js';
import { forbidden } from '../errors/catalog.js';
import type { Storage } from '../storage/storage.js';

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

/**
 * The fail-closed refusal as a `beforeDocUpdate` hook of every database, registered first: the
 * design documents are listed once per write request, and a refused write costs no later step
 * (no password hash in a users database).
 */
export function unrunValidationHooks(storage: Storage, isUsersDb: (db: string) => boolean): DatabaseHooks {
  return {
    name: 'validate_doc_update functions (not run yet: fail closed)',
    appliesTo: () => true,
    async beforeDocUpdate(batch) {
      if (batch.caller.isAdmin) return undefined;
      const holders = await designDocsWithValidation(storage, batch.db, isUsersDb(batch.db));
      if (holders.length === 0) return undefined;
      const refusal = forbidden(
        `Only database admins may write here: ${holders.join(', ')} has a validate_doc_update function, which this server does not run yet.`,
      );
      return async () => {
        throw refusal;
      };
    },
  };
}
