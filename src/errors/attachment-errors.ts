import { CouchError } from './couch-error.js';

/** CouchDB's answers about attachments (`couch_doc`, `couch_att`, `chttpd_db`). */
export const missingStub = (id: string, name: string): CouchError => new CouchError(412, 'missing_stub', `Invalid attachment stub in ${id} for ${name}`);
export const previousRevisionMissing = (id: string): CouchError => new CouchError(412, 'missing_stub', `Previous revision missing for document ${id}`);
export const attachmentTooLarge = (name: string): CouchError => new CouchError(413, 'attachment_too_large', name);
export const invalidAttachmentData = (name: string): CouchError => new CouchError(400, 'bad_request', `Invalid attachment data for ${name}`);
export const attachmentNameUnderscore = (name: string): CouchError =>
  new CouchError(400, 'bad_request', `Attachment name '${name}' starts with prohibited character '_'`);
export const attachmentNameNotUtf8 = (): CouchError => new CouchError(400, 'bad_request', 'Attachment name is not UTF-8 encoded');
/** A `content_type` that cannot travel as an HTTP header value (a CR or LF would split the answer's headers). */
export const invalidAttachmentContentType = (name: string): CouchError =>
  new CouchError(400, 'bad_request', `Invalid content_type for attachment ${JSON.stringify(name)}: it must be a valid HTTP header value.`);
export const attachmentNotObject = (): CouchError => new CouchError(400, 'bad_request', 'Attachments must be a JSON object of objects');
export const attachmentMissing = (): CouchError => new CouchError(404, 'not_found', 'Document is missing attachment');
export const rangeNotSatisfiable = (): CouchError => new CouchError(416, 'requested_range_not_satisfiable', 'Requested range not satisfiable');
/** A `follows` part whose bytes are not what its stub's digest says (parts paired wrongly, or damaged on the way). */
export const followsDigestMismatch = (name: string): CouchError =>
  new CouchError(400, 'bad_request', `The data of attachment ${JSON.stringify(name)} does not match its digest.`);
export const followsWithoutParts = (): CouchError => new CouchError(400, 'bad_request', 'An attachment says follows but the request has no part for it.');
export const localDocumentAttachments = (): CouchError => new CouchError(400, 'bad_request', '_local documents do not accept attachments.');
/** chttpd's answer when a standalone attachment write names a revision that is not stored. */
export const namedRevisionMissing = (): CouchError => new CouchError(409, 'not_found', 'missing_rev');
/** A form upload (`POST /{db}/{docid}`, multipart/form-data) from a page of another host, or of none: CouchDB's `validate_referer`. */
export const refererRequired = (): CouchError => new CouchError(400, 'bad_request', 'Referer header required.');
export const refererMismatch = (): CouchError => new CouchError(400, 'bad_request', 'Referer header must match host.');
/** Divan only: an `Origin` a browser sends with a cross-site form post. */
export const originMismatch = (): CouchError => new CouchError(400, 'bad_request', 'Origin header must match host.');
export const formDataRequired = (): CouchError => new CouchError(415, 'bad_content_type', 'Content-Type must be multipart/form-data');
/** Divan only (CouchDB fails with a 500): a form upload with neither `_rev` nor `_doc`. */
export const formWithoutDocument = (): CouchError => new CouchError(400, 'bad_request', 'A form upload needs a _rev or a _doc field.');
