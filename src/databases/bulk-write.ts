import { isObject, toEdit } from '../documents/document-json.js';
import type { DocUpdateStep } from '../documents/database-hooks.js';
import { documentTooLarge } from '../errors/catalog.js';
import { isCouchError } from '../errors/couch-error.js';
import { LoopTurns } from '../http/event-loop.js';
import type { JsonObject } from '../json/json.js';
import type { DocumentEdit, EditResult } from '../storage/storage.js';
import { attachmentsOf, keepStubs, withStubs } from './attachment-writes.js';
import { announceWritten, checkDesign, designRefusal, withGeneratedId } from './document-writes.js';
import type { OpenedDatabase } from './opened-database.js';
import { documentLimits, maxDocumentSize } from './settings.js';
import { updateSteps, type UpdateSteps } from './update-steps.js';
import { isValidated, proposedOf } from './validate-edits.js';

type Refusal = { error: string; reason: string };
type Slot =
  | { id: string; error: Refusal }
  | { id: string; edit: DocumentEdit }
  | { id: string; local: { body: JsonObject; rev?: string; deleted: boolean } };

function refusalOf(error: unknown): Refusal {
  if (!isCouchError(error)) throw error;
  return { error: error.error, reason: error.reason };
}

/**
 * One document of a batch: a malformed one fails the whole request (400), a refused one gets its
 * own error row. `step` runs the hooks; users-database batches are thus prepared in order, each
 * edit seeing the batch's earlier ones, and never take every place of the PBKDF2 queue at once.
 */
async function slotOf(opened: OpenedDatabase, doc: unknown, newEdits: boolean, step: DocUpdateStep | undefined): Promise<Slot> {
  const candidate = newEdits ? withGeneratedId(doc) : doc;
  let parsed: ReturnType<typeof toEdit>;
  try {
    parsed = toEdit(candidate, { newEdits });
  } catch (error) {
    // Where hooks check documents one by one (the users database), a malformed one with an id is
    // answered in its own row, as their refusals are.
    const id = isObject(candidate) ? candidate['_id'] : undefined;
    if (step === undefined || typeof id !== 'string') throw error;
    return { id, error: refusalOf(error) };
  }
  const { edit, rev } = parsed;
  if (edit.id.startsWith('_local/')) return { id: edit.id, local: { body: edit.body, rev, deleted: edit.deleted } };
  let final = edit;
  try {
    const stubs = await attachmentsOf(opened, edit, () => opened.storage.readDocument(opened.db, edit.id));
    // The size limit is on the document's JSON, its attachments' data apart (as CouchDB).
    if (JSON.stringify(edit.body).length > maxDocumentSize(opened.context.config)) return { id: edit.id, error: refusalOf(documentTooLarge()) };
    if (step) final = keepStubs(toEdit(await step(withStubs(candidate as JsonObject, stubs)), { newEdits }).edit, stubs);
  } catch (error) {
    return { id: edit.id, error: refusalOf(error) };
  }
  const refusal = designRefusal(opened, final.id);
  if (refusal) return { id: final.id, error: refusalOf(refusal) };
  try {
    await checkDesign(opened, final);
  } catch (error) {
    return { id: final.id, error: refusalOf(error) };
  }
  return { id: final.id, edit: final };
}

/** The validation functions over the batch's normal documents at once; a refused one gets its error row. */
async function validateSlots(opened: OpenedDatabase, slots: Slot[], steps: UpdateSteps): Promise<void> {
  if (!steps.validate) return;
  const at = slots.flatMap((slot, index) => ('edit' in slot && isValidated(slot.id) ? [index] : []));
  if (at.length === 0) return;
  const proposed = [];
  for (const index of at) proposed.push(await proposedOf(opened, (slots[index] as { edit: DocumentEdit }).edit, steps.stored));
  const refusals = await steps.validate(proposed);
  at.forEach((index, position) => {
    const refused = refusals[position];
    if (refused) slots[index] = { id: slots[index]!.id, error: refusalOf(refused) };
  });
}

async function rowOf(opened: OpenedDatabase, slot: Slot, result: () => EditResult, newEdits: boolean): Promise<JsonObject | undefined> {
  if ('error' in slot) return { id: slot.id, ...slot.error };
  if ('local' in slot) {
    const written = await opened.writeLocal(slot.id, slot.local.body, slot.local.rev, slot.local.deleted);
    return written.ok ? { ok: true, id: slot.id, rev: written.rev } : { id: slot.id, error: written.error, reason: written.reason };
  }
  const written = result();
  if (!written.ok) return { id: written.id, error: written.error, reason: written.reason };
  // Replicated edits (new_edits=false) that were stored get no row, as in CouchDB.
  return newEdits ? { ok: true, id: written.id, rev: written.rev } : undefined;
}

/**
 * `_bulk_docs`: every document through the same hooks as a single write, one storage call for the
 * batch, one row per document. A batch of 100 000 documents is prepared a slice at a time (as the
 * storage writes it), so other requests keep being answered.
 */
export async function bulkWrite(opened: OpenedDatabase, docs: readonly unknown[], newEdits: boolean): Promise<JsonObject[]> {
  const steps = await updateSteps(opened);
  const turns = new LoopTurns();
  const slots: Slot[] = [];
  for (const doc of docs) {
    await turns.maybeYield();
    slots.push(await slotOf(opened, doc, newEdits, steps.step));
  }
  await validateSlots(opened, slots, steps);
  const edits = slots.flatMap((slot) => ('edit' in slot ? [slot.edit] : []));
  const limits = documentLimits(opened.context.config);
  const results = edits.length > 0 ? await opened.storage.writeDocuments(opened.db, edits, { newEdits, limits }) : [];
  await announceWritten(opened, results);
  let next = 0;
  const rows: JsonObject[] = [];
  for (const slot of slots) {
    const row = await rowOf(opened, slot, () => results[next++]!, newEdits);
    if (row) rows.push(row);
  }
  return rows;
}
