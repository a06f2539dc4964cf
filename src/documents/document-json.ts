import { badRequest, documentNotObject, documentValidation, emptyDocumentId, illegalDocid, invalidRevFormat, reservedDocumentId, revisionsDiffer } from '../errors/catalog.js';
import { isStorableText } from '../json/json.js';
import { canonicalRevision, parseRevisionId } from '../revisions/revision-text.js';
import type { DocumentEdit, Json, JsonObject, StoredRevision } from '../storage/storage.js';

/** Special members a client may send; the read-only ones (`_conflicts`, …) are accepted and dropped. */
const ACCEPTED_SPECIAL = new Set([
  '_id',
  '_rev',
  '_deleted',
  '_revisions',
  '_conflicts',
  '_deleted_conflicts',
  '_local_seq',
  '_revs_info',
  '_attachments',
]);
/** Special members CouchDB keeps in the body as ordinary ones (`couch_doc:transfer_fields`). */
const BODY_SPECIAL = new Set([
  '_access',
  '_replication_id',
  '_replication_state',
  '_replication_state_reason',
  '_replication_state_time',
  '_replication_stats',
]);

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Document ids: non-empty strings; a leading `_` only for `_design/` and `_local/`. */
export function validateDocumentId(id: unknown): string {
  if (typeof id !== 'string') throw illegalDocid('Document id must be a string');
  if (id === '') throw emptyDocumentId();
  // A lone surrogate cannot be written as UTF-8 (storage would mangle it, a Location header
  // cannot encode it), and PostgreSQL text cannot hold NUL: such ids are refused on every backend.
  if (!isStorableText(id)) throw illegalDocid(id.includes('\u0000') ? 'Document id must not contain NUL characters.' : 'Document id must be valid UTF-8');
  if (id.startsWith('_') && !id.startsWith('_design/') && !id.startsWith('_local/')) {
    throw reservedDocumentId();
  }
  if (id === '_design/' || id === '_local/') throw illegalDocid(`Illegal document id \`${id}\``);
  return id;
}

/** A revision as a client names it (`_rev`, `?rev=`, `If-Match`), as stored; 400 when malformed. */
export function parseRev(rev: unknown): string {
  const canonical = canonicalRevision(rev);
  if (canonical === undefined) throw invalidRevFormat();
  return canonical;
}

interface IncomingDocument {
  edit: DocumentEdit;
  /** The `_rev` of the body, kept apart from the edit for new_edits=false handling. */
  rev?: string;
}

/**
 * Splits a client's JSON document into an edit: the id and revision come from the body (or the
 * URL), the body keeps only the user's own members. Uses Object.fromEntries so a member named
 * `__proto__` stays an ordinary member and never touches a prototype.
 */
export function toEdit(value: unknown, options: { id?: string; rev?: string; newEdits: boolean }): IncomingDocument {
  if (!isObject(value)) throw documentNotObject();
  for (const key of Object.keys(value)) {
    if (key.startsWith('_') && !ACCEPTED_SPECIAL.has(key) && !BODY_SPECIAL.has(key)) {
      throw documentValidation(`Bad special document member: ${key}`);
    }
  }
  const id = validateDocumentId(options.id ?? value['_id']);
  if (options.id !== undefined && value['_id'] !== undefined && value['_id'] !== options.id) {
    throw badRequest('Document id in the body does not match the URL.');
  }
  // `_local/` documents have no history: their `_revisions` is ignored, as CouchDB ignores it.
  const path = value['_revisions'] === undefined || id.startsWith('_local/') ? undefined : revisionsPath(value['_revisions']);
  // Where `_rev` and `_revisions` disagree, `_revisions` decides (as in CouchDB's transfer_fields).
  const bodyRev = value['_rev'] === undefined ? undefined : parseRev(value['_rev']);
  let rev = path?.[0] ?? bodyRev;
  if (options.rev !== undefined) {
    const asked = parseRev(options.rev);
    if (rev !== undefined && rev !== asked) throw revisionsDiffer();
    rev = asked;
  }
  const deleted = value['_deleted'] === true;
  // `_attachments` goes along for the database layer to resolve into stubs (attachments/incoming.ts);
  // `_local/` documents have none.
  const keep = (key: string): boolean => !key.startsWith('_') || BODY_SPECIAL.has(key) || (key === '_attachments' && !id.startsWith('_local/'));
  const body = Object.fromEntries(Object.entries(value).filter(([key]) => keep(key))) as JsonObject;
  const edit: DocumentEdit = { id, body, deleted };
  if (options.newEdits) {
    if (rev !== undefined) edit.baseRev = rev;
  } else {
    if (rev === undefined) throw badRequest('When new_edits is false, documents need _rev or _revisions.');
    edit.revPath = path ?? [rev];
  }
  return { edit, rev };
}

/** `_revisions` as full revisions, newest first; CouchDB's reasons where it refuses the same. */
function revisionsPath(revisions: Json): string[] {
  if (!isObject(revisions)) throw badRequest('_revisions must be an object');
  const { start, ids } = revisions;
  if (typeof start !== 'number' || !Number.isSafeInteger(start)) throw documentValidation("_revisions.start isn't an integer.");
  if (!Array.isArray(ids)) throw documentValidation("_revisions.ids isn't a array.");
  // Stricter than CouchDB, which would store generations of 0 and below.
  if (ids.length === 0 || ids.length > start) throw badRequest('Invalid _revisions');
  return ids.map((hash, index) => `${start - index}-${revisionIdOf(hash)}`);
}

function revisionIdOf(hash: Json): string {
  if (typeof hash !== 'string') throw documentValidation("RevId isn't a string");
  const stored = parseRevisionId(hash);
  if (stored !== undefined) return stored;
  throw isStorableText(hash) ? documentValidation("RevId isn't a valid hexadecimal") : invalidRevFormat();
}

export interface RenderOptions {
  revs?: boolean;
  /** `_revs_info`, when the stored revision carries it (ReadOptions.revsInfo). */
  revsInfo?: boolean;
  conflicts?: boolean;
  deletedConflicts?: boolean;
  localSeq?: boolean;
  /** Attachment stubs keep `encoding` and `encoded_length` (applied by the database's read view). */
  attEncodingInfo?: boolean;
}

/** A stored revision as CouchDB writes it: `_id`, `_rev`, `_deleted`, the body, then metadata. */
export function renderRevision(stored: StoredRevision, options: RenderOptions = {}): JsonObject {
  const entries: [string, Json][] = [
    ['_id', stored.id],
    ['_rev', stored.rev],
  ];
  if (stored.deleted) entries.push(['_deleted', true]);
  entries.push(...Object.entries(stored.body));
  if (options.revs) entries.push(['_revisions', { start: stored.revisionStart, ids: stored.revisionPath }]);
  if (options.revsInfo && stored.revsInfo) entries.push(['_revs_info', stored.revsInfo.map((info) => ({ ...info }))]);
  if (options.conflicts && stored.conflicts.length > 0) entries.push(['_conflicts', stored.conflicts]);
  if (options.deletedConflicts && stored.deletedConflicts.length > 0) {
    entries.push(['_deleted_conflicts', stored.deletedConflicts]);
  }
  if (options.localSeq) entries.push(['_local_seq', stored.seq]);
  return Object.fromEntries(entries) as JsonObject;
}
