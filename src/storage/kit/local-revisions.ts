/**
 * `_local` documents as both backends keep them: no history, no sequence, a revision `0-N` whose N
 * counts the writes since the document was created (stored as the integer N). A write must name the
 * current revision, or none when the document does not exist, as CouchDB compares them; a delete
 * answers `0-0` and the next put starts again at `0-1`.
 *
 * @example
 * decideLocalWrite('_local/cp', 2, '0-2', false) // { apply: true, counter: 3, result: { ok: true, id: '_local/cp', rev: '0-3' } }
 * decideLocalWrite('_local/cp', 2, '0-1', false) // { apply: false, result: <conflict> }
 */
import { documentConflict, type EditResult, type JsonObject, type LocalDocument } from '../storage.js';

const LOCAL_REV = /^0-(0|[1-9][0-9]*)$/;

/** The counter a local revision names: absent means 0. NaN (never equal to a counter) when malformed. */
export function localRevNumber(rev: string | undefined): number {
  if (rev === undefined) return 0;
  const match = LOCAL_REV.exec(rev);
  return match === null ? Number.NaN : Number(match[1]);
}

/** A stored local document (its counter and body JSON) as `getLocal` answers it. */
export function localDocument(id: string, counter: number, body: string): LocalDocument {
  return { id, rev: `0-${counter}`, body: JSON.parse(body) as JsonObject };
}

type LocalWriteDecision =
  /** The write names the wrong revision: nothing is stored. */
  | { apply: false; result: EditResult }
  /** Store the body with `counter` (put), or remove the row (delete, `counter` 0). */
  | { apply: true; counter: number; result: EditResult };

/**
 * What a put (`deleting` false) or delete of local document `id` does when its stored counter is
 * `stored` (undefined: no such document) and the caller names revision `rev`.
 */
export function decideLocalWrite(id: string, stored: number | undefined, rev: string | undefined, deleting: boolean): LocalWriteDecision {
  const current = stored ?? 0;
  if (localRevNumber(rev) !== current) return { apply: false, result: documentConflict(id) };
  const counter = deleting ? 0 : current + 1;
  return { apply: true, counter, result: { ok: true, id, rev: `0-${counter}` } };
}
