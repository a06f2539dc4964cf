import { CouchError } from './couch-error.js';

/**
 * The catalog of wire errors: every `{"error","reason"}` pair Divan answers with is built here,
 * so statuses and reasons stay byte-identical to CouchDB's and can be listed in docs/errors.md.
 */

export const badRequest = (reason: string): CouchError => new CouchError(400, 'bad_request', reason);
export const invalidJson = (): CouchError => badRequest('invalid UTF-8 JSON');
export const unauthorized = (reason: string): CouchError => new CouchError(401, 'unauthorized', reason);
export const forbidden = (reason: string): CouchError => new CouchError(403, 'forbidden', reason);
export const notFound = (reason = 'missing'): CouchError => new CouchError(404, 'not_found', reason);
export const conflict = (): CouchError => new CouchError(409, 'conflict', 'Document update conflict.');
export const preconditionFailed = (reason: string): CouchError =>
  new CouchError(412, 'file_exists', reason);

/** A user name with control characters or unpaired surrogates (auth/user-name.ts): in a `_users` write, and from a handler. */
const USER_NAME_REFUSAL = 'Usernames may not contain control characters or unpaired surrogates.';
export const userNameForbidden = (): CouchError => forbidden(USER_NAME_REFUSAL);
export const userNameRefused = (): CouchError => badRequest(USER_NAME_REFUSAL);

/** CouchDB's `validate_docid` refusals (couch_doc.erl): 400 `illegal_docid`, in `_bulk_docs` rows too. */
export const illegalDocid = (reason: string): CouchError => new CouchError(400, 'illegal_docid', reason);
/** `/{db}/_local`, `/{db}/_local/` and `/{db}/_local%2F`: no document named (chttpd_db's db_req). */
export const invalidLocalDocumentId = (): CouchError => badRequest('Invalid _local document id.');
/** couch_partition's refusals of a partition name (400 `illegal_partition`). */
export const illegalPartition = (reason: string): CouchError => new CouchError(400, 'illegal_partition', reason);
/** A write that would grow a partition already at `[couchdb] max_partition_size` (couch_db_updater). */
export const partitionOverflow = (id: string): CouchError => new CouchError(403, 'partition_overflow', `Partition limit exceeded due to update on '${id}'`);
export const notPartitioned = (): CouchError => badRequest('database is not partitioned');
/** couch_mrview's refusal of a design document with `options.partitioned: true` in a normal database. */
export const partitionedDesignInNormalDatabase = (): CouchError =>
  new CouchError(400, 'invalid_design_doc', 'partitioned option cannot be true in a non-partitioned database.');
export const reservedDocumentId = (): CouchError => illegalDocid('Only reserved document ids may start with underscore.');
/** `/{db}/_xxx` naming no endpoint: the name, so that a client does not read it as a missing database. */
export const unknownEndpoint = (path: string): CouchError => notFound(`Database endpoint ${path} does not exist.`);

export const methodNotAllowed = (allowed: readonly string[]): CouchError =>
  new CouchError(405, 'method_not_allowed', `Only ${allowed.join(',')} allowed`, {
    Allow: allowed.join(','),
  });

/** `/_node/{name}/…` of a cluster node that did not answer in time (chttpd_node's `call_node`). */
export const nodeDown = (node: string): CouchError => new CouchError(412, 'nodedown', `${node} is down`);

/** CouchDB's answer for a feature it has switched off (chttpd's `error_info(not_implemented)`). */
export const notImplemented = (): CouchError => new CouchError(501, 'not_implemented', 'this feature is not yet implemented');

export const notAServerAdmin = (): CouchError => unauthorized('You are not a server admin.');
export const notAMetricsReader = (): CouchError => unauthorized('You are not a server admin or read-only metrics user');
export const notAServerOrDbAdmin = (): CouchError => unauthorized('You are not a server or db admin.');
export const notAuthorizedForDb = (): CouchError => unauthorized('You are not authorized to access this db.');
export const notAllowedForDb = (): CouchError => forbidden('You are not allowed to access this db.');
export const notADbOrServerAdmin = (): CouchError => unauthorized('You are not a db or server admin.');
export const usersDesignDocsForAdmins = (): CouchError =>
  forbidden('Only administrators can view design docs in the users database.');
export const accountLocked = (): CouchError =>
  forbidden('Account is temporarily locked due to multiple authentication failures');
export const conflictedUserDocument = (): CouchError =>
  unauthorized('User document conflicts must be resolved before the document is used for authentication purposes.');
export const invalidPrf = (): CouchError => forbidden('PRF is invalid');
export const iterationCountTooLow = (): CouchError => forbidden('Iteration count is too low for this server');
export const iterationCountTooHigh = (): CouchError => forbidden('Iteration count is too high for this server');
export const pleaseLogin = (): CouchError => unauthorized('Please login.');
export const malformedCookie = (): CouchError => badRequest('Malformed AuthSession cookie. Please clear your cookies.');
export const nameOrPasswordIncorrect = (): CouchError => unauthorized('Name or password is incorrect.');
export const authenticationRequired = (): CouchError => unauthorized('Authentication required.');

// Per-document access (`_access`, docs/access.md).
export const accessDbAdminsOnly = (): CouchError => forbidden('In a database with per-document access this endpoint is for database admins.');
export const accessMustNameWriter = (): CouchError => forbidden('_access must name you or one of your roles.');
export const accessCannotShrink = (): CouchError => forbidden('_access cannot lose any of its users or roles.');
export const accessWinnerOnly = (): CouchError => forbidden('Only the winning revision of a document with _access can be edited.');
export const accessMalformed = (): CouchError => badRequest('_access must be a list of user names and roles.');

export const databaseMissing = (): CouchError => notFound('Database does not exist.');
export const databaseExists = (): CouchError =>
  preconditionFailed('The database could not be created, the file already exists.');
export const illegalDatabaseName = (name: string): CouchError =>
  new CouchError(
    400,
    'illegal_database_name',
    `Name: '${name}'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.`,
  );

export const invalidRevFormat = (): CouchError => badRequest('Invalid rev format');
export const requestBodyNotObject = (): CouchError => badRequest('Request body must be a JSON object');
export const documentNotObject = (): CouchError => badRequest('Document must be a JSON object');
export const emptyDocumentId = (): CouchError => illegalDocid('Document id must not be empty');
export const incompleteRequestBody = (): CouchError => badRequest('Incomplete request body.');
export const revisionsDiffer = (): CouchError => badRequest('Document rev from request body and query string have different values');
/** `?rev=` and `If-Match` naming two revisions (chttpd_db's extract_header_rev). */
export const etagRevisionDiffers = (): CouchError => badRequest('Document rev and etag have different values');
export const documentMissing = (): CouchError => notFound('missing');
export const documentDeleted = (): CouchError => notFound('deleted');
export const badContentType = (reason: string): CouchError => new CouchError(415, 'bad_content_type', reason);
export const jsonContentTypeRequired = (): CouchError => badContentType('Content-Type must be application/json');
export const requestEntityTooLarge = (): CouchError =>
  new CouchError(413, 'too_large', 'the request entity is too large');
export const documentTooLarge = (): CouchError => new CouchError(413, 'too_large', 'Document too large');
export const tooManyLeaves = (max: number): CouchError =>
  new CouchError(413, 'too_large', `Document would have more than ${max} leaf revisions; resolve its conflicts first.`);
export const tooManyRevisions = (max: number): CouchError =>
  new CouchError(413, 'too_large', `Document would keep more than ${max} revisions.`);
export const headersTooLarge = (): CouchError =>
  new CouchError(431, 'request_header_fields_too_large', 'Request header fields too large');
export const requestTimeout = (): CouchError => new CouchError(408, 'request_timeout', 'Request timed out');
export const invalidDocumentId = (reason: string): CouchError => badRequest(reason);
export const documentValidation = (reason: string): CouchError => new CouchError(400, 'doc_validation', reason);
export const unknownConfigValue = (): CouchError => notFound('unknown_config_value');
export const configSectionBlocked = (): CouchError => forbidden('Config section blacklisted for modification over HTTP API.');
export const unknownError = (): CouchError => new CouchError(500, 'unknown_error', 'An internal error occurred.');
/** CouchDB's answer to the Clouseau search API (`_search`, `_search_info`, `_search_analyze`) without Clouseau; the error name has a space, as CouchDB's. */
export const searchUnavailable = (): CouchError => new CouchError(503, 'service unavailable', 'Search is not available');
export const serviceUnavailable = (reason: string): CouchError =>
  new CouchError(503, 'service_unavailable', reason);
export const passwordHashingBusy = (): CouchError =>
  new CouchError(503, 'service_unavailable', 'Too many password checks are waiting. Try again shortly.', { 'Retry-After': '1' });

/** An error of a replication (`POST /_replicate`), with CouchDB's status, error and reason. */
export const replicationError = (status: number, error: string, reason: string): CouchError => new CouchError(status, error, reason);
/** Design-document JavaScript (src/js/): a function that does not compile, one that failed to run. */
export const compilationError = (reason: string): CouchError => new CouchError(400, 'compilation_error', reason);
export const gone = (reason: string): CouchError => new CouchError(410, 'gone', reason);
export const invalidDesignDoc = (reason: string): CouchError => new CouchError(400, 'invalid_design_doc', reason);
export const osProcessError = (reason: string): CouchError => new CouchError(500, 'os_process_error', reason);
export const javascriptError = (error: string, reason: string): CouchError => new CouchError(500, error, reason);
