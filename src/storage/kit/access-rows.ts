/**
 * The per-principal rows of the documents a write batch changed (see access-store.ts): the
 * principals of each winning revision, at the document's new sequence. Both backends replace a
 * changed document's rows with these in the write's transaction.
 */
import { DESIGN_PRINCIPAL } from '../access-store.js';
import type { ChangedDocument } from './batch-merge.js';

interface AccessRow {
  id: string;
  principal: string;
  seq: number;
  deleted: boolean;
}

/** The principals a revision body names in `_access`; none when the member is absent or malformed. */
function principalsOfBody(body: string | undefined): string[] {
  // Most bodies have no `_access`: they are not parsed a second time.
  if (body === undefined || !body.includes('"_access"')) return [];
  const access = (JSON.parse(body) as { _access?: unknown })._access;
  if (!Array.isArray(access) || !access.every((item) => typeof item === 'string')) return [];
  return [...new Set(access as string[])].filter((principal) => principal !== DESIGN_PRINCIPAL);
}

/** The principals of a document's winning revision: its `_access`, or every member for a design document. */
export function principalsOfDocument(id: string, winnerBody: () => string | undefined): string[] {
  return id.startsWith('_design/') ? [DESIGN_PRINCIPAL] : principalsOfBody(winnerBody());
}

/**
 * The rows of the changed documents; `storedBody` reads a winner's body the batch did not write (a
 * stored leaf that became the winner).
 */
export function accessRowsOf(documents: readonly ChangedDocument[], firstSeq: number, storedBody: (doc: ChangedDocument) => string | undefined): AccessRow[] {
  const rows: AccessRow[] = [];
  for (const doc of documents) {
    const seq = firstSeq + doc.lastChange;
    const principals = principalsOfDocument(doc.id, () => doc.newBodies.get(doc.winner) ?? storedBody(doc));
    for (const principal of principals) rows.push({ id: doc.id, principal, seq, deleted: doc.deleted });
  }
  return rows;
}
