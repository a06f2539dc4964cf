import { isCouchError } from '../errors/couch-error.js';
import { AUTH_DDOC_ID, authDesignDoc } from '../users/auth-design-doc.js';
import { writeDocument } from './document-writes.js';
import type { OpenedDatabase } from './opened-database.js';

/**
 * CouchDB's `ensure_auth_ddoc_exists` (chttpd_auth_cache): the authentication database gets its
 * `_design/_auth` when it is created, and again at start when it is missing (deleted, or a database
 * created before). An existing one is left as it is (an admin's edit runs as written). Two nodes
 * starting together may both try: the loser's conflict is ignored, as CouchDB's
 * `update_doc_ignoring_conflict`.
 */
export async function ensureAuthDesignDoc(opened: OpenedDatabase): Promise<void> {
  const stored = await opened.storage.readDocument(opened.db, AUTH_DDOC_ID);
  if (stored !== undefined && !stored.deleted) return;
  try {
    await writeDocument(opened, authDesignDoc(), { id: AUTH_DDOC_ID, newEdits: true });
  } catch (error) {
    if (!(isCouchError(error) && error.status === 409)) throw error;
  }
}
