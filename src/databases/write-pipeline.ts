/**
 * The one write pipeline: every write (PUT, POST, DELETE, COPY, attachments, `_bulk_docs`,
 * replicated edits, `_users`, index definitions) is a batch through these steps, in CouchDB's
 * order (`prep_and_validate_updates`): access and the conflict check of every document, then the
 * `beforeDocUpdate` steps with the attachments resolved, the design-document rules, validation of
 * the batch, one storage call, `afterWrite`. A single write is a batch of one.
 */
import type { FollowsSource } from '../attachments/incoming.js';
import { isObject, toEdit } from '../documents/document-json.js';
import { documentMissing, documentTooLarge, notADbOrServerAdmin } from '../errors/catalog.js';
import { isCouchError, type CouchError } from '../errors/couch-error.js';
import { LoopTurns } from '../turns/loop-turns.js';
import type { JsonObject } from '../json/json.js';
import type { DocumentEdit, EditResult } from '../storage/storage.js';
import { attachmentsOf, keepStubs, withStubs } from './attachment-writes.js';
import type { OpenedDatabase } from './opened-database.js';
import { documentLimits, maxDocumentSize } from './settings.js';
import { checkDesignPartitioning, isPartitioned, overflowRefusals, requirePartitionedId } from './partitions.js';
import { requireNamedLeaf, updateSteps, type UpdateSteps } from './update-steps.js';
import { isValidated, proposedOf } from './validate-edits.js';

/** One document of a batch: its body, and for a single write the id and revision of the path. */
interface BatchItem {
  body: unknown;
  id?: string;
  rev?: string;
}

interface BatchOptions {
  newEdits: boolean;
  /** `_bulk_docs`: each document's JSON is checked against `max_document_size` (a single body was, while read). */
  checkSize?: boolean;
  /** DELETE: a document that never existed is 404 rather than a conflict. */
  mustExist?: boolean;
  /** The parts of a multipart/related body, for `follows: true` attachments (a batch of one). */
  follows?: FollowsSource;
  /** Aborted when the client went away: a batch not yet stored stops (`clientGone`) and writes nothing. */
  signal?: AbortSignal;
}

/** What became of one document: refused, a `_local/` write, or what storage answered. */
export type Outcome =
  | { id: string; refused: CouchError }
  | { id: string; local: EditResult }
  | { id: string; result: EditResult };

type Slot =
  | { id: string; refused: CouchError }
  | { id: string; local: { body: JsonObject; rev?: string; deleted: boolean } }
  | { id: string; edit: DocumentEdit; sent: JsonObject; rev?: string };

/** Design documents change what a database does, so only its admins may write them (every database). */
function designRefusal(opened: OpenedDatabase, id: string): CouchError | undefined {
  return id.startsWith('_design/') && !opened.caller.isAdmin ? notADbOrServerAdmin() : undefined;
}

/** A live design document must work: every hook may refuse it (functions that do not compile). */
async function checkDesign(opened: OpenedDatabase, edit: DocumentEdit): Promise<void> {
  if (!edit.id.startsWith('_design/') || edit.deleted) return;
  for (const hooks of opened.hooks) await hooks.checkDesign?.({ _id: edit.id, ...edit.body });
}

/** Tells the database's hooks which documents a durable write changed. */
async function announceWritten(opened: OpenedDatabase, results: readonly EditResult[]): Promise<void> {
  const ids = results.filter((result) => result.ok).map((result) => result.id);
  if (ids.length > 0) await opened.context.hooks.afterWrite({ db: opened.db, ids });
}

function refusal(error: unknown): CouchError {
  if (!isCouchError(error)) throw error;
  return error;
}

/** Parsing, access and the conflict check of one document: nothing of it is run or stored yet. */
async function admitted(opened: OpenedDatabase, steps: UpdateSteps, item: BatchItem, options: BatchOptions): Promise<Slot> {
  let parsed: ReturnType<typeof toEdit>;
  try {
    parsed = toEdit(item.body, { newEdits: options.newEdits, ...(item.id === undefined ? {} : { id: item.id }), ...(item.rev === undefined ? {} : { rev: item.rev }) });
    // As CouchDB's validate_docid: an id not of a partition's form fails the request, not a row.
    if (isPartitioned(opened.security)) requirePartitionedId(parsed.edit.id);
  } catch (error) {
    // A malformed document fails the whole request, except where hooks check documents one by one
    // (the users database): one with an id is refused alone, as their refusals are.
    const id = isObject(item.body) ? item.body['_id'] : undefined;
    if (steps.step === undefined || typeof id !== 'string') throw error;
    return { id, refused: refusal(error) };
  }
  const { edit, rev } = parsed;
  if (edit.id.startsWith('_local/')) return { id: edit.id, local: { body: edit.body, ...(rev === undefined ? {} : { rev }), deleted: edit.deleted } };
  try {
    const checked = options.newEdits && (steps.step !== undefined || (steps.validate !== undefined && isValidated(edit.id)));
    const needsStored = !opened.caller.isMember || options.mustExist === true || checked;
    const stored = needsStored ? await steps.stored(edit.id) : undefined;
    opened.requireUpdateAccess(edit.id, stored !== undefined && !stored.deleted);
    if (options.mustExist && !stored) throw documentMissing();
    if (checked) requireNamedLeaf(stored, rev === undefined ? {} : { _rev: rev });
  } catch (error) {
    return { id: edit.id, refused: refusal(error) };
  }
  return { id: edit.id, edit, sent: item.body as JsonObject, ...(rev === undefined ? {} : { rev }) };
}

/** Attachments resolved, the `beforeDocUpdate` steps run, the design-document rules applied. */
async function prepared(opened: OpenedDatabase, steps: UpdateSteps, slot: Slot, options: BatchOptions): Promise<Slot> {
  if (!('edit' in slot)) return slot;
  const { edit, sent, rev } = slot;
  try {
    const stubs = await attachmentsOf(opened, edit, () => steps.stored(edit.id), options.follows);
    // The size limit is on the document's JSON, its attachments' data apart (as CouchDB).
    if (options.checkSize && JSON.stringify(edit.body).length > maxDocumentSize(opened.context.config)) throw documentTooLarge();
    let final = edit;
    if (steps.step) {
      const doc = Object.fromEntries([...Object.entries(sent), ['_id', edit.id], ...(rev === undefined ? [] : [['_rev', rev]])]) as JsonObject;
      final = keepStubs(toEdit(await steps.step(withStubs(doc, stubs)), { newEdits: options.newEdits }).edit, stubs);
    }
    const designRefused = designRefusal(opened, final.id);
    if (designRefused) throw designRefused;
    checkDesignPartitioning(opened, final);
    await checkDesign(opened, final);
    return { id: final.id, edit: final, sent };
  } catch (error) {
    return { id: edit.id, refused: refusal(error) };
  }
}

/** The validation functions over the batch's normal documents at once; a refused one keeps its refusal. */
async function validated(opened: OpenedDatabase, steps: UpdateSteps, slots: Slot[]): Promise<void> {
  const at = slots.flatMap((slot, index) => ('edit' in slot && isValidated(slot.id) ? [index] : []));
  if (at.length === 0) return;
  const proposed = [];
  for (const index of at) proposed.push(await proposedOf(opened, (slots[index] as { edit: DocumentEdit }).edit, steps.stored));
  const refusals = await steps.validate!(proposed);
  at.forEach((index, position) => {
    const refused = refusals[position];
    if (refused) slots[index] = { id: slots[index]!.id, refused: refusal(refused) };
  });
}

/** Edits into a partition already at `max_partition_size` become refusals (partitions.ts). */
async function refuseOverflows(opened: OpenedDatabase, slots: Slot[], newEdits: boolean): Promise<void> {
  const refusals = await overflowRefusals(opened, slots.flatMap((slot) => ('edit' in slot ? [slot.edit] : [])), newEdits);
  if (refusals.size === 0) return;
  slots.forEach((slot, index) => {
    const refused = 'edit' in slot ? refusals.get(slot.id) : undefined;
    if (refused) slots[index] = { id: slot.id, refused };
  });
}

/** Writes a batch through the pipeline; one outcome per document, in order. */
export async function writeBatch(opened: OpenedDatabase, items: readonly BatchItem[], options: BatchOptions): Promise<Outcome[]> {
  const steps = await updateSteps(opened);
  // A batch of one (every single write) has nothing to yield between: it keeps its promises few.
  const turns = items.length > 1 ? LoopTurns.until(options.signal) : undefined;
  const slots: Slot[] = [];
  for (const item of items) {
    if (turns) await turns.maybeYield();
    slots.push(await admitted(opened, steps, item, options));
  }
  for (let index = 0; index < slots.length; index++) {
    if (turns) await turns.maybeYield();
    slots[index] = await prepared(opened, steps, slots[index]!, options);
  }
  if (steps.validate) await validated(opened, steps, slots);
  await refuseOverflows(opened, slots, options.newEdits);
  const edits = slots.flatMap((slot) => ('edit' in slot ? [slot.edit] : []));
  const limits = documentLimits(opened.context.config);
  const results = edits.length > 0 ? await opened.storage.writeDocuments(opened.db, edits, { newEdits: options.newEdits, limits }) : [];
  await announceWritten(opened, results);
  let next = 0;
  const outcomes: Outcome[] = [];
  for (const slot of slots) {
    if ('refused' in slot) outcomes.push(slot);
    else if ('edit' in slot) outcomes.push({ id: slot.id, result: results[next++]! });
    else outcomes.push({ id: slot.id, local: await opened.writeLocal(slot.id, slot.local.body, slot.local.rev, slot.local.deleted) });
  }
  return outcomes;
}
