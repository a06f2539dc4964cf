import { withGeneratedId } from '../databases/document-writes.js';
import { toEdit } from '../documents/document-json.js';
import type { JsonObject } from '../json/json.js';
import type { Request } from './request.js';

/**
 * How many copies a write asks for: a `_bulk_docs` body's integer `w`, else the `w` query
 * parameter (CouchDB's order). Anything else is the default, one copy.
 */
function askedCopies(request: Request, bodyW?: unknown): number {
  if (Number.isInteger(bodyW)) return bodyW as number;
  const fromQuery = request.query.get('w');
  return fromQuery !== null && /^\d+$/.test(fromQuery) ? Number(fromQuery) : 1;
}

/**
 * CouchDB answers 202 (`accepted`) instead of 201 when fewer copies were written than `w` asked
 * for. One node keeps one copy, so any `w` above 1 is accepted without its quorum, as a one-node
 * CouchDB (`n = 1`) answers; the write itself is as durable as any other.
 */
export function writeStatus(request: Request, bodyW?: unknown): 201 | 202 {
  return askedCopies(request, bodyW) > 1 ? 202 : 201;
}

/** `_bulk_docs` rows of an accepted batch: each written document's row says `"accepted": true`, as CouchDB's. */
export function acceptedRows(rows: readonly JsonObject[]): JsonObject[] {
  return rows.map((row) => (row['ok'] === true ? { ...row, accepted: true } : row));
}

/** `?batch=ok`: CouchDB answers 202 with the id only, the revision not being known yet. */
export function isBatchWrite(request: Request): boolean {
  return request.query.get('batch') === 'ok';
}

/**
 * `_bulk_docs` with `"all_or_nothing": true`: CouchDB 3 parses every document, then refuses the
 * whole request with 417 and writes nothing (fabric_doc_update's validate_atomic_update), one row
 * per document naming the revision it was based on (`0-` for a new one).
 */
export function allOrNothingRows(docs: readonly unknown[]): JsonObject[] {
  return docs.map((doc) => {
    const { edit, rev } = toEdit(withGeneratedId(doc), { newEdits: true });
    return { id: edit.id, rev: rev ?? '0-', error: 'not_implemented', reason: 'all_or_nothing is not supported' };
  });
}
