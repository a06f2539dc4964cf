/**
 * The rules of the `_replicator` database (couch_replicator_docs `before_doc_update` and
 * `after_doc_read`): a document gets its author as `owner`; only a database admin may write a
 * document owned by someone else (403 `Can't update replication documents from other users.`);
 * a malformed replication is refused (403 with the reason) unless it is deleted or `failed`; a
 * non-admin reading another user's document sees its endpoints without credentials (shown-endpoint.ts).
 */
import type { DatabaseHooks, ReadFilter } from '../documents/database-hooks.js';
import { forbidden } from '../errors/catalog.js';
import type { JsonObject } from '../json/json.js';
import { ReplicationSpecError } from './replication-errors.js';
import { stripCredentials, strippedProxies, URL_FIELDS } from './shown-endpoint.js';

/** Members shown to other users with their credentials stripped. */
const SHOWN_STRIPPED: ReadonlySet<string> = new Set(['source', 'target', ...URL_FIELDS]);

const OTHER_USERS = "Can't update replication documents from other users.";

export function replicatorHooks(dbName: string, validate: (doc: JsonObject) => void): DatabaseHooks {
  return {
    name: 'replicator database rules',
    appliesTo: (db) => db === dbName,
    async beforeDocUpdate(batch) {
      return async (doc) => {
        const id = String(doc['_id'] ?? '');
        if (id.startsWith('_design/') || id.startsWith('_local/')) return doc;
        const name = batch.caller.userCtx.name;
        const owner = doc['owner'];
        let written = doc;
        if (owner === undefined || (owner === null && batch.caller.isAdmin)) written = { ...doc, owner: name };
        else if (owner !== name && !batch.caller.isAdmin) throw forbidden(OTHER_USERS);
        if (doc['_deleted'] === true || doc['_replication_state'] === 'failed') return written;
        try {
          validate(written);
        } catch (error) {
          if (error instanceof ReplicationSpecError) throw forbidden(error.reason);
          throw error;
        }
        return written;
      };
    },
    afterDocRead(_db, caller): ReadFilter {
      const shown = (doc: JsonObject): JsonObject => {
        if (caller.isAdmin || String(doc['_id'] ?? '').startsWith('_design/') || doc['owner'] === caller.userCtx.name) return doc;
        return { ...doc, source: stripCredentials(doc['source']) ?? null, target: stripCredentials(doc['target']) ?? null, ...strippedProxies(doc) };
      };
      // Queries may use stored values of what every caller sees as stored: everything for admins,
      // every member but the endpoints (whose credentials are stripped) for others.
      const showsAsStored = (member: string): boolean => caller.isAdmin || !SHOWN_STRIPPED.has(member);
      return { single: shown, listed: shown, showsAsStored };
    },
  };
}
