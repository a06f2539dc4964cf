import { CouchError } from './couch-error.js';

/** CouchDB's answers to query-string parameters it cannot read (`chttpd:parse_*`). */
export const queryParseError = (reason: string): CouchError => new CouchError(400, 'query_parse_error', reason);
export const invalidBooleanParameter = (value: string): CouchError => queryParseError(`Invalid boolean parameter: ${JSON.stringify(value)}`);
export const invalidPositiveInteger = (value: string): CouchError => queryParseError(`Invalid value for positive integer: ${JSON.stringify(value)}`);
