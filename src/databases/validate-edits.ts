import { withoutEncodingInfo } from '../attachments/encoding.js';
import type { DocValidation, Proposed, UpdateBatch } from '../documents/database-hooks.js';
import { renderRevision } from '../documents/document-json.js';
import type { JsonObject } from '../json/json.js';
import type { DocumentEdit, StoredRevision } from '../storage/storage.js';
import type { OpenedDatabase } from './opened-database.js';

/** Design and local documents are never validated by validation functions (as CouchDB). */
export const isValidated = (id: string): boolean => !id.startsWith('_design/') && !id.startsWith('_local/');

/** The validations of every hook of the database for one request, chained: the first refusal wins. */
export async function validationOf(opened: OpenedDatabase, batch: UpdateBatch): Promise<DocValidation | undefined> {
  const validations: DocValidation[] = [];
  for (const hooks of opened.hooks) {
    const validation = await hooks.validateUpdates?.(batch);
    if (validation) validations.push(validation);
  }
  if (validations.length === 0) return undefined;
  return async (proposed) => {
    const refusals: (Error | undefined)[] = proposed.map(() => undefined);
    for (const validation of validations) {
      const open = proposed.flatMap((each, index) => (refusals[index] === undefined ? [index] : []));
      if (open.length === 0) break;
      const found = await validation(open.map((index) => proposed[index]!));
      open.forEach((index, at) => (refusals[index] = found[at]));
    }
    return refusals;
  };
}

/** The edit as the validation function's `newDoc`: `_id`, `_rev`, `_deleted`, `_revisions` when replicated, the body. */
function newDocOf(edit: DocumentEdit): JsonObject {
  const rev = edit.revPath?.[0] ?? edit.baseRev;
  const doc: JsonObject = { _id: edit.id };
  if (rev !== undefined) doc['_rev'] = rev;
  if (edit.deleted) doc['_deleted'] = true;
  if (edit.revPath) doc['_revisions'] = { start: Number.parseInt(edit.revPath[0]!, 10), ids: edit.revPath.map((each) => each.slice(each.indexOf('-') + 1)) };
  return withoutEncodingInfo(Object.assign(doc, edit.body));
}

/**
 * The edit and the stored revision it replaces: the one its `_rev` names (for a replicated edit,
 * its parent), a tombstone included; null for a creation, or when that revision's body is gone.
 */
export async function proposedOf(opened: OpenedDatabase, edit: DocumentEdit, stored: (id: string) => Promise<StoredRevision | undefined>): Promise<Proposed> {
  const base = edit.revPath ? edit.revPath[1] : edit.baseRev;
  if (base === undefined) return { doc: newDocOf(edit), oldDoc: null };
  const current = await stored(edit.id);
  if (current === undefined) return { doc: newDocOf(edit), oldDoc: null };
  const old = current.rev === base ? current : await opened.storage.readDocument(opened.db, edit.id, { rev: base });
  // Stubs show no `encoding`/`encoded_length` to JavaScript, as CouchDB's.
  return { doc: newDocOf(edit), oldDoc: old ? withoutEncodingInfo(renderRevision(old)) : null };
}
