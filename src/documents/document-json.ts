import { badRequest, documentNotObject, documentValidation, emptyDocumentId, invalidRevFormat, revisionsDiffer } from '../errors/catalog.js';
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
]);
const REV = /^(\d+)-([0-9a-f]+)$/;

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Document ids: non-empty strings; a leading `_` only for `_design/` and `_local/`. */
export function validateDocumentId(id: unknown): string {
  if (typeof id !== 'string') throw badRequest('Document id must be a string');
  if (id === '') throw emptyDocumentId();
  // A lone surrogate cannot be written as UTF-8 (storage would mangle it, a Location header
  // cannot encode it), and PostgreSQL text cannot hold NUL: such ids are refused on every backend.
  if (!isWellFormedText(id)) throw badRequest('Document id must be valid UTF-8.');
  if (id.includes('\u0000')) throw badRequest('Document id must not contain NUL characters.');
  if (id.startsWith('_') && !id.startsWith('_design/') && !id.startsWith('_local/')) {
    throw badRequest('Only reserved document ids may start with underscore.');
  }
  if (id === '_design/' || id === '_local/') throw emptyDocumentId();
  return id;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** `String.prototype.isWellFormed` (ES2024, not in this project's lib typings). */
function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

export function isValidRev(rev: string): boolean {
  return REV.test(rev);
}

export function parseRev(rev: unknown): string {
  if (typeof rev !== 'string' || !isValidRev(rev)) throw invalidRevFormat();
  return rev;
}

export interface IncomingDocument {
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
    if (key.startsWith('_') && !ACCEPTED_SPECIAL.has(key)) {
      if (key === '_attachments') throw badRequest('Attachments are not supported by this server.');
      throw documentValidation(`Bad special document member: ${key}`);
    }
  }
  const id = validateDocumentId(options.id ?? value['_id']);
  if (options.id !== undefined && value['_id'] !== undefined && value['_id'] !== options.id) {
    throw badRequest('Document id in the body does not match the URL.');
  }
  let rev = value['_rev'] === undefined ? undefined : parseRev(value['_rev']);
  if (options.rev !== undefined) {
    if (rev !== undefined && rev !== options.rev) {
      throw revisionsDiffer();
    }
    rev = parseRev(options.rev);
  }
  const deleted = value['_deleted'] === true;
  const body = Object.fromEntries(Object.entries(value).filter(([key]) => !key.startsWith('_'))) as JsonObject;
  const edit: DocumentEdit = { id, body, deleted };
  if (options.newEdits) {
    if (rev !== undefined) edit.baseRev = rev;
  } else {
    edit.revPath = revisionPath(value['_revisions'], rev);
  }
  return { edit, rev };
}

function revisionPath(revisions: Json | undefined, rev: string | undefined): string[] {
  if (revisions === undefined) {
    if (rev === undefined) throw badRequest('When new_edits is false, documents need _rev or _revisions.');
    return [rev];
  }
  if (!isObject(revisions)) throw badRequest('_revisions must be an object');
  const { start, ids } = revisions;
  if (typeof start !== 'number' || !Number.isInteger(start) || start < 1 || !Array.isArray(ids) || ids.length === 0) {
    throw badRequest('_revisions must have an integer start and a non-empty ids list');
  }
  if (ids.length > start || ids.some((hash) => typeof hash !== 'string' || !/^[0-9a-f]+$/.test(hash))) {
    throw badRequest('Invalid _revisions');
  }
  const path = (ids as string[]).map((hash, index) => `${start - index}-${hash}`);
  if (rev !== undefined && rev !== path[0]) throw badRequest('_rev does not match _revisions');
  return path;
}

export interface RenderOptions {
  revs?: boolean;
  /** `_revs_info`, when the stored revision carries it (ReadOptions.revsInfo). */
  revsInfo?: boolean;
  conflicts?: boolean;
  deletedConflicts?: boolean;
  localSeq?: boolean;
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
