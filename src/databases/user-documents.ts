import { isCouchError } from '../errors/couch-error.js';
import type { UserDocuments } from '../users/hash-upgrader.js';
import type { Databases } from './databases.js';
import { writeDocument } from './document-writes.js';

/**
 * The authentication database as the hash upgrader (users/) reaches it: as the server itself,
 * through the same hooks as any other write. A client write that got there first simply wins.
 */
export function userDocumentsOf(databases: Databases): UserDocuments {
  return {
    current: (id) => databases.current(databases.usersDbName, id),
    async writeAsAdmin(doc) {
      try {
        await writeDocument(await databases.openAsServer(databases.usersDbName), doc, { newEdits: true });
      } catch (error) {
        if (!isCouchError(error) || error.status !== 409) throw error;
      }
    },
  };
}
