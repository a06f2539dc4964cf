import type { Config } from '../config/config.js';
import { compressionSettings, type CompressionSettings } from '../attachments/encoding.js';
import type { DocumentLimits } from '../storage/storage.js';

/** `[couchdb] max_document_size`: the largest JSON document accepted. */
export function maxDocumentSize(config: Config): number {
  return config.getInteger('couchdb', 'max_document_size');
}

/** `[couchdb] max_attachment_size`: the largest attachment accepted, in bytes. */
export function maxAttachmentSize(config: Config): number {
  return config.getInteger('couchdb', 'max_attachment_size');
}

/** `[chttpd_auth] authentication_db`: the users database logins read. */
export function usersDbName(config: Config): string {
  return config.authString('authentication_db');
}

/** `[couchdb] max_document_leaves` and `max_document_revisions`: how large replication may make a document. */
export function documentLimits(config: Config): DocumentLimits {
  return {
    maxLeaves: Math.max(1, config.getInteger('couchdb', 'max_document_leaves')),
    maxRevisions: Math.max(1, config.getInteger('couchdb', 'max_document_revisions')),
  };
}

/** `[attachments] compressible_types` and `compression_level`: which attachments are stored gzip-compressed. */
export function attachmentCompression(config: Config): CompressionSettings {
  return compressionSettings(config.getString('attachments', 'compressible_types'), config.getInteger('attachments', 'compression_level'));
}
