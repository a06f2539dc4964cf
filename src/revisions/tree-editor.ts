/**
 * Edits one document's revision tree. A batch parses the stored tree once, applies every edit of
 * that document to one editor (which keeps the set of leaves up to date as edits arrive, so each
 * edit costs the length of its path, not the size of the tree), then stems and serialises once.
 * The pure `applyEdit` and `mergePath` below are one-edit batches.
 *
 * @example
 * const editor = new TreeEditor(undefined)
 * editor.mergePath(['2-b', '1-a'], false)
 * editor.mergePath(['2-c', '1-a'], false)
 * editor.winner() // '2-c'; editor.leafCount === 2
 * editor.mergePath(['2-d', '1-a'], false, { maxLeaves: 2, maxRevisions: 100 }) // { ok: false, reason: 'too_many_leaves' }
 */
import {
  compareLeaves,
  isValidRevisionPath,
  leavesOf,
  REVS_LIMIT,
  revisionHash,
  stem,
  type RevisionTree,
} from './revision-tree.js';
import { generationOf } from './revision-text.js';
import type { JsonObject } from '../json/json.js';

/** A new_edits=true edit, as the client sent it. */
export interface NewEdit {
  body: JsonObject;
  deleted: boolean;
  /** `_rev`: the leaf being edited; undefined to create or recreate. */
  baseRev?: string;
}

type EditOutcome =
  | {
      ok: true;
      /** The edit's revision (new, or the existing one of a replayed path). */
      rev: string;
      /** False when the tree did not change (a replicated revision that was already known). */
      changed: boolean;
      /** Revisions that were leaves before and are not any more: their bodies can be dropped. */
      obsoleteLeaves: string[];
    }
  /** `too_many_…`: the edit would take the document past one of its `DocumentLimits`. */
  | { ok: false; reason: 'conflict' | 'too_many_leaves' | 'too_many_revisions' };

/** How large replication may make one document's revision tree. */
export interface DocumentLimits {
  /** Leaves: the winner and its conflicts, deleted ones included. */
  maxLeaves: number;
  /** Revisions kept in the tree, leaves and ancestors. */
  maxRevisions: number;
}

const UNLIMITED: DocumentLimits = { maxLeaves: Number.POSITIVE_INFINITY, maxRevisions: Number.POSITIVE_INFINITY };

/** An edit applied to a whole tree: the outcome and, when accepted, the stemmed tree after it. */
type TreeUpdate = (EditOutcome & { ok: true; tree: RevisionTree }) | (EditOutcome & { ok: false });

const CONFLICT: EditOutcome = { ok: false, reason: 'conflict' };
const TOO_MANY_LEAVES: EditOutcome = { ok: false, reason: 'too_many_leaves' };
const TOO_MANY_REVISIONS: EditOutcome = { ok: false, reason: 'too_many_revisions' };

export class TreeEditor {
  // Copied on construction and changed in place; nodes are replaced, never mutated, so the
  // caller's tree is never touched.
  readonly #tree: RevisionTree;
  readonly #leaves: Set<string>;
  #size: number;

  constructor(tree: RevisionTree | undefined) {
    this.#tree = { ...tree };
    this.#leaves = leavesOf(this.#tree);
    this.#size = Object.keys(this.#tree).length;
  }

  get leafCount(): number {
    return this.#leaves.size;
  }

  get isEmpty(): boolean {
    return this.#leaves.size === 0;
  }

  /** The winning leaf (CouchDB's order, see `sortedLeaves`); undefined for an empty tree. */
  winner(): string | undefined {
    let best: string | undefined;
    for (const leaf of this.#leaves) {
      if (best === undefined || compareLeaves(this.#tree, leaf, best) < 0) best = leaf;
    }
    return best;
  }

  isDeleted(rev: string): boolean {
    return this.#tree[rev]?.deleted ?? false;
  }

  /** The tree as stored: stemmed to `revsLimit` revisions above every leaf. */
  toTree(revsLimit: number = REVS_LIMIT): RevisionTree {
    return stem(this.#tree, revsLimit, this.#leaves);
  }

  /** Applies a new_edits=true edit (CouchDB's rules, see `#editBase`). It never adds a leaf. */
  applyEdit(edit: NewEdit): EditOutcome {
    const base = this.#editBase(edit);
    if (base === 'conflict') return CONFLICT;
    const generation = base === null ? 1 : generationOf(base) + 1;
    const rev = `${generation}-${revisionHash(edit.deleted, base, edit.body)}`;
    // Only a replicated path that lies about its history can already hold this revision (under
    // another parent): refusing keeps such a tree from gaining a second node of the same name.
    if (Object.hasOwn(this.#tree, rev)) return CONFLICT;
    this.#tree[rev] = { parent: base, deleted: edit.deleted };
    this.#size++;
    this.#leaves.add(rev);
    if (base !== null) this.#leaves.delete(base);
    return { ok: true, rev, changed: true, obsoleteLeaves: base === null ? [] : [base] };
  }

  /**
   * Merges a new_edits=false revision path (newest first), as replication does: missing revisions
   * are inserted along the path, a revision already known is a no-op, and nothing ever conflicts.
   * `deleted` applies to the path's newest revision. A path that would take the document past
   * `limits` is refused: more leaves (a path that adds none never is), or more revisions than the
   * tree holds before stemming. The caller validates with `isValidRevisionPath`.
   */
  mergePath(revPath: readonly string[], deleted: boolean, limits: DocumentLimits = UNLIMITED): EditOutcome {
    if (!isValidRevisionPath(revPath)) throw new TypeError(`invalid revision path: ${JSON.stringify(revPath)}`);
    const rev = revPath[0];
    if (Object.hasOwn(this.#tree, rev)) return { ok: true, rev, changed: false, obsoleteLeaves: [] };
    const growth = this.#growth(revPath);
    if (growth.leaves > 0 && this.#leaves.size + growth.leaves > limits.maxLeaves) return TOO_MANY_LEAVES;
    if (this.#size + growth.revisions > limits.maxRevisions) return TOO_MANY_REVISIONS;
    const obsoleteLeaves: string[] = [];
    const inserted = new Set<string>();
    for (let i = revPath.length - 1; i >= 0; i--) {
      const r = revPath[i];
      const parent = i + 1 < revPath.length ? revPath[i + 1] : null;
      const node = this.#tree[r];
      if (node === undefined) {
        this.#tree[r] = { parent, deleted: i === 0 ? deleted : false };
        this.#size++;
        this.#leaves.add(r);
        inserted.add(r);
      } else if (node.parent === null && parent !== null) {
        // The tree had lost this revision's ancestors to stemming; the path knows them again.
        this.#tree[r] = { ...node, parent };
      } else {
        continue;
      }
      if (parent !== null && this.#leaves.delete(parent) && !inserted.has(parent)) obsoleteLeaves.push(parent);
    }
    return { ok: true, rev, changed: true, obsoleteLeaves };
  }

  /** How many leaves (net) and revisions merging `revPath` (whose newest revision is new) adds. */
  #growth(revPath: readonly string[]): { leaves: number; revisions: number } {
    let growth = 0;
    const added = new Set<string>();
    for (let i = revPath.length - 1; i >= 0; i--) {
      const r = revPath[i];
      const parent = i + 1 < revPath.length ? revPath[i + 1] : null;
      const node = this.#tree[r];
      const attaches = node === undefined || (node.parent === null && parent !== null);
      if (node === undefined) {
        added.add(r);
        growth++;
      }
      if (attaches && parent !== null && (added.has(parent) || this.#leaves.has(parent))) growth--;
    }
    return { leaves: growth, revisions: added.size };
  }

  /**
   * The revision a new_edits=true edit extends, or `conflict`; null means "create a root".
   *
   * | document            | baseRev                 | result                         |
   * |---------------------|-------------------------|--------------------------------|
   * | none                | none                    | root (`1-…`), a tombstone too  |
   * | none                | any                     | conflict                       |
   * | winner live         | a leaf (any branch)     | that leaf                      |
   * | winner live         | none / not a leaf       | conflict                       |
   * | every leaf deleted  | none                    | the deleted winner             |
   * | every leaf deleted  | a leaf                  | that leaf                      |
   */
  #editBase(edit: NewEdit): string | null | 'conflict' {
    if (edit.baseRev !== undefined) return this.#leaves.has(edit.baseRev) ? edit.baseRev : 'conflict';
    const winner = this.winner();
    if (winner === undefined) return null;
    return this.#tree[winner].deleted ? winner : 'conflict';
  }
}

/** Applies one new_edits=true edit to `tree` (left unchanged), stemming to `revsLimit`. */
export function applyEdit(tree: RevisionTree | undefined, edit: NewEdit, revsLimit: number = REVS_LIMIT): TreeUpdate {
  const editor = new TreeEditor(tree);
  const outcome = editor.applyEdit(edit);
  return outcome.ok ? { ...outcome, tree: editor.toTree(revsLimit) } : outcome;
}

/** Merges one new_edits=false path into `tree` (left unchanged), stemming to `revsLimit`. */
export function mergePath(
  tree: RevisionTree | undefined,
  revPath: readonly string[],
  deleted: boolean,
  revsLimit: number = REVS_LIMIT,
): TreeUpdate {
  const editor = new TreeEditor(tree);
  const outcome = editor.mergePath(revPath, deleted);
  if (!outcome.ok) return outcome;
  return { ...outcome, tree: outcome.changed ? editor.toTree(revsLimit) : (tree ?? {}) };
}
