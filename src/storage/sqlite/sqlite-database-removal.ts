/**
 * Every row a database owns in the main file, removed inside the caller's write transaction:
 * attachment references and blobs, bodies, documents, local documents, access rows, Mango and view indexes,
 * purge history, then the database row itself. Attachment chunks (another file) go later.
 */
import type { Connection } from './sqlite-connection.js';
import type { Statements } from './sqlite-statements.js';
import { deleteAttachmentsOfDatabase } from './sqlite-attachments.js';
import type { SqlitePurges } from './sqlite-purge.js';
import { dropViewTables } from './sqlite-views.js';
import { dropSearchTables } from './sqlite-search-tables.js';

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
  dropIndexesOf(db, 'view_indexes', dbId, dropViewTables);
  dropIndexesOf(db, 'search_indexes', dbId, dropSearchTables);
  st.deleteDatabase.run(dbId);
}

/** Every index of `catalog` the database owns: each one's tables, then its catalog rows. */
function dropIndexesOf(db: Connection, catalog: 'view_indexes' | 'search_indexes', dbId: number, dropSql: (indexId: number) => string): void {
  for (const indexId of db.prepare(`SELECT index_id FROM ${catalog} WHERE db_id = ?`).pluck().all(dbId) as number[]) db.exec(dropSql(indexId));
  db.prepare(`DELETE FROM ${catalog} WHERE db_id = ?`).run(dbId);
}
