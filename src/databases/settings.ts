import type { Config } from '../config/config.js';
import { DEFAULT_DOCUMENT_LIMITS, type DocumentLimits } from '../storage/storage.js';

/** `[couchdb] max_document_size`: the largest JSON document accepted. */
export function maxDocumentSize(config: Config): number {
  return config.getInteger('couchdb', 'max_document_size', 8000000);
}

/** `[chttpd_auth] authentication_db`: the users database logins read. */
export function usersDbName(config: Config): string {
  return config.authString('authentication_db', '_users');
}

/** `[couchdb] max_document_leaves` and `max_document_revisions`: how large replication may make a document. */
export function documentLimits(config: Config): DocumentLimits {
  const { maxLeaves, maxRevisions } = DEFAULT_DOCUMENT_LIMITS;
  return {
    maxLeaves: Math.max(1, config.getInteger('couchdb', 'max_document_leaves', maxLeaves)),
    maxRevisions: Math.max(1, config.getInteger('couchdb', 'max_document_revisions', maxRevisions)),
  };
}
