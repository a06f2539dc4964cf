/**
 * Per-document access (`_access`, CouchDB's RFC 010), for databases created with
 * `PUT /{db}?access=true`: each document names in `_access` the users and roles that may read,
 * update and delete it; database and server admins reach every document. The flag is kept in the
 * database's `_security` (`ACCESS_FLAG`), set at creation and never changed afterwards.
 */
import type { Caller, DatabaseHooks, DocUpdateStep, ReadFilter, UpdateBatch } from '../documents/database-hooks.js';
import { accessCannotShrink, accessDbAdminsOnly, accessMalformed, accessMustNameWriter, accessWinnerOnly, documentMissing } from '../errors/catalog.js';
import type { Json, JsonObject } from '../json/json.js';
import type { SecurityObject } from '../storage/storage.js';

/** The `_security` member that marks a database with per-document access. */
const ACCESS_FLAG = 'divan_access';

export function isAccessDb(security: SecurityObject | JsonObject): boolean {
  return (security as JsonObject)[ACCESS_FLAG] === true;
}

/** `_security` of a new database, with the access flag when asked for. */
export function withAccessFlag(security: SecurityObject, access: boolean): SecurityObject {
  return access ? ({ ...security, [ACCESS_FLAG]: true } as SecurityObject) : security;
}

/** A replaced `_security` keeps the stored flag, whatever the new body says: access cannot be toggled. */
export function keepingAccessFlag(stored: SecurityObject, replacement: SecurityObject): SecurityObject {
  const { [ACCESS_FLAG]: _ignored, ...rest } = replacement as JsonObject;
  return withAccessFlag(rest as SecurityObject, isAccessDb(stored));
}

/** Paths this version has not scoped to the caller's documents: admins only in an access database. */
export function refuseUnscoped(security: SecurityObject, caller: Caller): void {
  if (isAccessDb(security) && !caller.isAdmin) {
    throw accessDbAdminsOnly();
  }
}

/** The principals of an `_access` member: 400 unless a list of strings. */
function principalsOf(value: Json | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) throw accessMalformed();
  return value as string[];
}

function names(caller: Caller, principals: readonly string[]): boolean {
  const { name, roles } = caller.userCtx;
  return principals.some((principal) => principal === name || roles.includes(principal));
}

/** Whether the caller is one of a stored revision's principals (a malformed `_access` admits nobody). */
function admits(doc: JsonObject, caller: Caller): boolean {
  const access = doc['_access'];
  return Array.isArray(access) && access.every((item) => typeof item === 'string') && names(caller, access as string[]);
}

/**
 * The revision a write edits: `_rev`, or for a replicated revision (`new_edits=false`, which carries
 * `_revisions`) its parent, so that a replicated update extends the winner as an edit would.
 */
function editedRevision(doc: JsonObject): Json | undefined {
  const revisions = doc['_revisions'];
  if (revisions === null || typeof revisions !== 'object' || Array.isArray(revisions)) return doc['_rev'];
  const { start, ids } = revisions;
  return typeof start === 'number' && Array.isArray(ids) && typeof ids[1] === 'string' ? `${start - 1}-${ids[1]}` : undefined;
}

/** A non-admin's document write: the writer stays among the principals, and no principal is dropped. */
function checkedWrite(doc: JsonObject, current: JsonObject | undefined, caller: Caller): JsonObject {
  if (current !== undefined) {
    // A document the caller cannot read is answered as a missing one (404), not 403.
    if (!admits(current, caller)) throw documentMissing();
    if (editedRevision(doc) !== current['_rev']) throw accessWinnerOnly();
  }
  const sent = principalsOf(doc['_access']);
  const access = sent ?? (doc['_deleted'] === true && current !== undefined ? principalsOf(current['_access']) : undefined);
  if (access === undefined || !names(caller, access)) throw accessMustNameWriter();
  const kept = current === undefined ? [] : (principalsOf(current['_access']) ?? []);
  if (kept.some((principal) => !access.includes(principal))) throw accessCannotShrink();
  return sent === undefined ? { ...doc, _access: access } : doc;
}

function stepFor(batch: UpdateBatch): DocUpdateStep {
  return async (doc) => {
    const id = doc['_id'] as string;
    // Design documents are for admins (the pipeline's design rule refuses them with its own error).
    if (id.startsWith('_design/')) return doc;
    return checkedWrite(doc, await batch.current(id), batch.caller);
  };
}

function readFilter(caller: Caller): ReadFilter {
  return {
    single: (doc) => (String(doc['_id']).startsWith('_design/') || admits(doc, caller) ? doc : undefined),
    // Listings read the caller's own rows (access-scope.ts): another's document reaching here is a
    // bug, refused rather than shown.
    listed: (doc) => {
      if (String(doc['_id']).startsWith('_design/') || admits(doc, caller)) return doc;
      throw accessDbAdminsOnly();
    },
  };
}

/** The rules of every database created with `?access=true`; other databases pass through untouched. */
export function accessHooks(): DatabaseHooks {
  return {
    name: 'per-document access (_access)',
    appliesTo: () => true,
    beforeDocUpdate: async (batch) => {
      if (batch.caller.isAdmin) {
        if (!isAccessDb(batch.secObj)) return undefined;
        return async (doc) => {
          principalsOf(doc['_access']);
          return doc;
        };
      }
      return isAccessDb(batch.secObj) ? stepFor(batch) : undefined;
    },
    afterDocRead: (_db, caller, secObj) => (isAccessDb(secObj) && !caller.isAdmin ? readFilter(caller) : undefined),
  };
}
