/**
 * Every row a database owns in the main file, removed inside the caller's write transaction:
 * attachment references and blobs, bodies, documents, local documents, access rows, Mango and view indexes,
 * purge history, then the database row itself. Attachment chunks (another file) go later.
 */
import type { Connection } from './sqlite-connection.js';
import type { Statements } from './sqlite-statements.js';
import { deleteAttachmentsOfDatabase } from './sqlite-attachments.js';
import type { SqlitePurges } from './sqlite-purge.js';
import { dropViewIndexesOf } from './sqlite-views.js';
import { dropSearchIndexesOf } from './sqlite-search.js';

export function deleteRowsOfDatabase(db: Connection, st: Statements, purges: SqlitePurges, dbId: number): void {
  deleteAttachmentsOfDatabase(st, dbId);
  st.deleteBodiesOfDatabase.run(dbId);
  st.deleteDocumentsOfDatabase.run(dbId);
  st.deleteLocalsOfDatabase.run(dbId);
  st.deleteAccessRowsOfDatabase.run(dbId);
  st.idBlocks.deleteOfDatabase.run(dbId);
  st.idBlocks.deleteGroupsOfDatabase.run(dbId);
  st.deleteIndexRowsOfDatabase.run(dbId);
  st.deleteIndexesOfDatabase.run(dbId);
  purges.deleteOfDatabase(dbId);
  dropViewIndexesOf(db, dbId);
  dropSearchIndexesOf(db, dbId);
  st.deleteDatabase.run(dbId);
}
