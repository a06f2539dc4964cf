import { CouchError } from './couch-error.js';

/** CouchDB's answers to query-string parameters it cannot read (`chttpd:parse_*`). */
export const queryParseError = (reason: string): CouchError => new CouchError(400, 'query_parse_error', reason);
export const invalidBooleanParameter = (value: string): CouchError => queryParseError(`Invalid boolean parameter: ${JSON.stringify(value)}`);
export const invalidPositiveInteger = (value: string): CouchError => queryParseError(`Invalid value for positive integer: ${JSON.stringify(value)}`);
/** Divan's bound on `keys` (`[couchdb] max_keys_count`; CouchDB has none). */
export const tooManyKeys = (max: number): CouchError => new CouchError(400, 'bad_request', `\`keys\` may hold at most ${max} keys ([couchdb] max_keys_count).`);
/** CouchDB's answer to a `_bulk_get` of more than `[couchdb] max_bulk_get_count` documents. */
export const tooManyBulkGetDocs = (max: number): CouchError => new CouchError(413, 'max_bulk_get_count_exceeded', String(max));
