/**
 * The in-memory half of a document write, shared by both backends: merges a batch of edits, in
 * order, into one `TreeEditor` per document id (each stored tree parsed once, each new tree
 * serialised once), and says what the backend has to write: one row per changed document, the
 * bodies of new revisions, the stored leaves that stopped being leaves (their bodies stay, marked
 * superseded, until compaction), and the counter deltas.
 */
import { tooManyLeaves, tooManyRevisions } from '../../errors/catalog.js';
import { REVS_LIMIT, type RevisionTree } from '../../revisions/revision-tree.js';
import { documentConflict, type DocumentEdit, type DocumentLimits, type EditResult } from '../storage.js';
import { TreeEditor } from '../../revisions/tree-editor.js';

export interface QueuedEdit {
  edit: DocumentEdit;
  newEdits: boolean;
  /** The limits of the request that sent the edit. */
  limits: DocumentLimits;
}

/** A document row as the backend read it (inside the write's transaction). */
export interface StoredDocument {
  docPk: number;
  /** The tree's JSON, parsed only when the batch edits the document. */
  tree: string;
  deleted: boolean;
}

export interface ChangedDocument {
  id: string;
  /** undefined: the document is not stored yet. */
  docPk: number | undefined;
  /** Deleted flag of the stored row; undefined when there is no row. */
  storedDeleted: boolean | undefined;
  treeJson: string;
  winner: string;
  deleted: boolean;
  /** Index among the batch's changes of the document's latest change: its sequence is firstSeq + this. */
  lastChange: number;
  /** Bodies of revisions created by this batch that are still leaves: rev → JSON. */
  newBodies: Map<string, string>;
  /** Bodies of revisions created by this batch that another edit of it already superseded. */
  supersededBodies: Map<string, string>;
}

export interface MergedBatch {
  /** One per edit, in order. */
  results: EditResult[];
  /** Edits that changed a tree; each takes its own update sequence. */
  changes: number;
  documents: ChangedDocument[];
  /** Stored leaves that are no longer leaves: the backend marks their bodies superseded. */
  obsolete: { docPk: number; rev: string }[];
  /** Bytes of the new leaf bodies (the backend moves the obsolete stored ones to the superseded count). */
  addedBytes: number;
  /** Bytes of `supersededBodies`. */
  supersededBytes: number;
  liveDelta: number;
  deletedDelta: number;
}

interface DocumentState {
  stored: StoredDocument | undefined;
  editor: TreeEditor;
  lastChange: number;
  newBodies: Map<string, string>;
  supersededBodies: Map<string, string>;
}

function refusal(id: string, reason: 'conflict' | 'too_many_leaves' | 'too_many_revisions', limits: DocumentLimits): EditResult {
  if (reason === 'conflict') return documentConflict(id);
  const error = reason === 'too_many_leaves' ? tooManyLeaves(limits.maxLeaves) : tooManyRevisions(limits.maxRevisions);
  return { ok: false, id, error: 'too_large', reason: error.reason };
}

/**
 * Merges `edits` (validated by the caller); `stored` reads a document's row, once per id. Each
 * changed tree is stemmed to the database's `revsLimit`, as CouchDB stems on every write.
 */
export function mergeBatch(edits: readonly QueuedEdit[], stored: (id: string) => StoredDocument | undefined, revsLimit: number = REVS_LIMIT): MergedBatch {
  const states = new Map<string, DocumentState>();
  const results: EditResult[] = [];
  const obsolete: { docPk: number; rev: string }[] = [];
  let changes = 0;
  let addedBytes = 0;
  let supersededBytes = 0;
  for (const { edit, newEdits, limits } of edits) {
    let state = states.get(edit.id);
    if (state === undefined) {
      const row = stored(edit.id);
      const tree = row === undefined ? undefined : (JSON.parse(row.tree) as RevisionTree);
      state = { stored: row, editor: new TreeEditor(tree), lastChange: -1, newBodies: new Map(), supersededBodies: new Map() };
      states.set(edit.id, state);
    }
    const outcome = newEdits
      ? state.editor.applyEdit(edit)
      : state.editor.mergePath(edit.revPath ?? [], edit.deleted, limits);
    if (!outcome.ok) {
      results.push(refusal(edit.id, outcome.reason, limits));
      continue;
    }
    results.push({ ok: true, id: edit.id, rev: outcome.rev });
    if (!outcome.changed) continue;

    state.lastChange = changes++;
    const body = JSON.stringify(edit.body);
    state.newBodies.set(outcome.rev, body);
    addedBytes += Buffer.byteLength(body);
    for (const leaf of outcome.obsoleteLeaves) {
      const created = state.newBodies.get(leaf);
      if (created !== undefined) {
        state.newBodies.delete(leaf);
        state.supersededBodies.set(leaf, created);
        addedBytes -= Buffer.byteLength(created);
        supersededBytes += Buffer.byteLength(created);
      } else if (state.stored !== undefined) {
        obsolete.push({ docPk: state.stored.docPk, rev: leaf });
      }
    }
  }

  return { results, changes, obsolete, addedBytes, supersededBytes, ...changedDocuments(states, revsLimit) };
}

/** The row to write for each document the batch changed, and the document counters' deltas. */
function changedDocuments(states: Map<string, DocumentState>, revsLimit: number): Pick<MergedBatch, 'documents' | 'liveDelta' | 'deletedDelta'> {
  const documents: ChangedDocument[] = [];
  let liveDelta = 0;
  let deletedDelta = 0;
  for (const [id, state] of states) {
    if (state.lastChange < 0) continue;
    const winner = state.editor.winner() as string;
    const deleted = state.editor.isDeleted(winner);
    const storedDeleted = state.stored?.deleted;
    liveDelta += Number(!deleted) - Number(storedDeleted === false);
    deletedDelta += Number(deleted) - Number(storedDeleted === true);
    documents.push({
      id,
      docPk: state.stored?.docPk,
      storedDeleted,
      treeJson: JSON.stringify(state.editor.toTree(revsLimit)),
      winner,
      deleted,
      lastChange: state.lastChange,
      newBodies: state.newBodies,
      supersededBodies: state.supersededBodies,
    });
  }
  return { documents, liveDelta, deletedDelta };
}
