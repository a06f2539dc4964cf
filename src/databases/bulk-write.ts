import type { JsonObject } from '../json/json.js';
import { withGeneratedId } from './document-writes.js';
import type { OpenedDatabase } from './opened-database.js';
import { writeBatch, type Outcome } from './write-pipeline.js';

function rowOf(outcome: Outcome, newEdits: boolean): JsonObject | undefined {
  if ('refused' in outcome) return { id: outcome.id, error: outcome.refused.error, reason: outcome.refused.reason };
  const written = 'local' in outcome ? outcome.local : outcome.result;
  if (!written.ok) return { id: outcome.id, error: written.error, reason: written.reason };
  // Replicated edits (new_edits=false) that were stored get no row, as in CouchDB (local ones do).
  return newEdits || 'local' in outcome ? { ok: true, id: outcome.id, rev: written.rev } : undefined;
}

/**
 * `_bulk_docs`: every document through the one write pipeline, one storage call for the batch,
 * one row per document. A malformed document fails the whole request (400), except where hooks
 * check documents one by one (the users database): there it gets its own row, as their refusals do.
 */
export async function bulkWrite(opened: OpenedDatabase, docs: readonly unknown[], newEdits: boolean, signal?: AbortSignal): Promise<JsonObject[]> {
  const items = docs.map((doc) => ({ body: newEdits ? withGeneratedId(doc) : doc }));
  const rows: JsonObject[] = [];
  for (const outcome of await writeBatch(opened, items, { newEdits, checkSize: true, signal })) {
    const row = rowOf(outcome, newEdits);
    if (row) rows.push(row);
  }
  return rows;
}
