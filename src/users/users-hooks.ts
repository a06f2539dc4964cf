import type { Caller, DatabaseHooks, DocUpdateStep, UpdateBatch, Written } from '../documents/database-hooks.js';
import { validateDocumentId } from '../documents/document-json.js';
import { usersDesignDocsForAdmins } from '../errors/catalog.js';
import type { JsonObject } from '../json/json.js';
import { filterUserRead, listedMembersAsStored, listedUserDoc, prepareUserWrite, userNameFromId } from './user-documents.js';
import type { UsersDatabase } from './users-database.js';

function isOwner(caller: Caller, id: string | undefined): boolean {
  return id !== undefined && caller.userCtx.name !== null && userNameFromId(id) === caller.userCtx.name;
}

/**
 * CouchDB's `couch_users_db` as one hook object, for every users database (`UsersDatabase.isUsersDb`):
 * - access: design documents are for its admins; a document's owner may read it and update it,
 *   and with `users_db_public` anyone may read the public fields (docs/architecture.md, the hooks);
 * - beforeDocUpdate: hashing and validation (`prepareUserWrite`), each edit of a batch checked
 *   against the batch's last accepted edit of the same id, as if that one were stored already: two
 *   revisions of one new name in a `new_edits: false` batch must not both pass as creations;
 * - afterDocRead: password hashes only for admins and owners (`filterUserRead`, `listedUserDoc`);
 * - afterWrite: `onWritten` (credential caches, the cluster).
 */
export function usersDatabaseHooks(users: UsersDatabase, onWritten: (written: Written) => void): DatabaseHooks {
  return {
    name: 'users database rules',
    appliesTo: (db) => users.isUsersDb(db),
    access: {
      refusePath(id, caller) {
        if (id.startsWith('_design/') && !caller.isAdmin) throw usersDesignDocsForAdmins();
      },
      readsWithoutMembership: (caller, id) => isOwner(caller, id) || users.isPublic(),
      // Only updates: a name known from a JWT or a proxy alone must not be able to give itself a
      // lasting password by creating its document (creation needs membership).
      updatesWithoutMembership: (caller, id) => isOwner(caller, id),
    },
    beforeDocUpdate: async (batch) => userDocumentStep(users, batch),
    afterDocRead(_db, caller) {
      const publicFields = users.publicFields();
      return {
        single: (doc) => filterUserRead(doc, caller, publicFields),
        listed: (doc) => listedUserDoc(doc, caller, publicFields),
        showsAsStored: listedMembersAsStored(caller, publicFields),
      };
    },
    afterWrite: onWritten,
  };
}

function userDocumentStep(users: UsersDatabase, batch: UpdateBatch): DocUpdateStep {
  const settings = users.hashSettings();
  const accepted = new Map<string, JsonObject>();
  const writer = { userCtx: batch.caller.userCtx, isAdmin: batch.caller.isAdmin };
  return async (doc) => {
    const id = typeof doc['_id'] === 'string' ? validateDocumentId(doc['_id']) : '';
    const previous = accepted.get(id) ?? (await batch.current(id));
    const prepared = await prepareUserWrite(doc, previous, writer, settings);
    if (prepared['_deleted'] !== true) accepted.set(id, prepared);
    return prepared;
  };
}
