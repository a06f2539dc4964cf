import { withoutProps } from './partitions.js';
import type { DocUpdateStep, DocValidation, UpdateBatch } from '../documents/database-hooks.js';
import { renderRevision } from '../documents/document-json.js';
import { conflict } from '../errors/catalog.js';
import type { JsonObject } from '../json/json.js';
import type { StoredRevision } from '../storage/storage.js';
import type { OpenedDatabase } from './opened-database.js';
import { validationOf } from './validate-edits.js';

/** The `beforeDocUpdate` steps of one write request, chained, and the stored documents they read. */
export interface UpdateSteps {
  /** Undefined when no hook has anything to do for this caller: documents go to storage as sent. */
  readonly step: DocUpdateStep | undefined;
  /** The validation functions of the request's documents, undefined when there are none. */
  readonly validate: DocValidation | undefined;
  /** The stored winning revision (deleted ones too), read once per id for the whole request. */
  stored(id: string): Promise<StoredRevision | undefined>;
}

/** Asks every hook of the database for its step for this request, in registration order. */
export async function updateSteps(opened: OpenedDatabase): Promise<UpdateSteps> {
  const reads = new Map<string, Promise<StoredRevision | undefined>>();
  const stored = (id: string): Promise<StoredRevision | undefined> => {
    let read = reads.get(id);
    if (read === undefined) {
      // An id storage cannot hold is simply not stored; its own refusal comes from the id rules.
      read = id === '' || id.includes('\u0000') ? Promise.resolve(undefined) : opened.storage.readDocument(opened.db, id);
      reads.set(id, read);
    }
    return read;
  };
  const batch: UpdateBatch = {
    db: opened.db,
    caller: opened.caller,
    secObj: withoutProps(opened.security) as unknown as JsonObject,
    current: async (id) => {
      const found = await stored(id);
      return found && !found.deleted ? renderRevision(found) : undefined;
    },
  };
  const steps: DocUpdateStep[] = [];
  for (const hooks of opened.hooks) {
    const step = await hooks.beforeDocUpdate?.(batch);
    if (step) steps.push(step);
  }
  const validate = await validationOf(opened, batch);
  if (steps.length === 0) return { step: undefined, validate, stored };
  const step: DocUpdateStep = async (doc) => {
    let current = doc;
    for (const each of steps) current = await each(current);
    return current;
  };
  return { step, validate, stored };
}

/**
 * As CouchDB, a write to a live document that does not name one of its leaves is a conflict
 * before any validation, so that validation messages never hint at the document's content.
 */
export function requireNamedLeaf(stored: StoredRevision | undefined, doc: JsonObject): void {
  if (!stored || stored.deleted) return;
  const rev = doc['_rev'];
  if (typeof rev !== 'string' || (rev !== stored.rev && !stored.conflicts.includes(rev))) throw conflict();
}
