/**
 * Purge as both backends apply it (CouchDB's `couch_key_tree:remove_leafs`): an asked revision
 * that is a leaf goes, with every ancestor no other branch still needs; revisions that are not
 * leaves are ignored. A document whose every leaf goes is removed, history and all; one that keeps
 * a branch moves to a new update sequence, so feeds and replicators see its new winner.
 */
import { leavesOf, winningRevision, type RevisionTree } from './revision-tree.js';

export interface PurgeRequest {
  id: string;
  revs: readonly string[];
}

/** What purging some revisions does to one document. */
interface DocumentPurge {
  /** The asked revisions that were leaves: the answer's `purged` list. */
  purged: string[];
  /** Every revision taken out of the tree: their bodies go too. */
  removed: string[];
  /** The document after the purge; undefined when it is gone. */
  remaining?: { treeJson: string; winner: string; deleted: boolean };
}

export function planDocumentPurge(treeJson: string, revs: readonly string[]): DocumentPurge {
  const tree = JSON.parse(treeJson) as RevisionTree;
  const leaves = leavesOf(tree);
  const purged = [...new Set(revs)].filter((rev) => leaves.has(rev));
  const remaining: RevisionTree = { ...tree };
  const children = new Map<string, number>();
  for (const node of Object.values(tree)) if (node.parent !== null) children.set(node.parent, (children.get(node.parent) ?? 0) + 1);
  const removed: string[] = [];
  for (const leaf of purged) {
    let current: string | null = leaf;
    while (current !== null && Object.hasOwn(remaining, current) && (children.get(current) ?? 0) === 0) {
      const parent: string | null = remaining[current]!.parent;
      delete remaining[current];
      removed.push(current);
      if (parent !== null) children.set(parent, (children.get(parent) ?? 1) - 1);
      current = parent;
    }
  }
  const winner = winningRevision(remaining);
  if (purged.length === 0 || winner === undefined) return { purged, removed };
  return { purged, removed, remaining: { treeJson: JSON.stringify(remaining), winner, deleted: remaining[winner]!.deleted } };
}

/** The database counters a purge moves, tallied document by document inside one transaction. */
export class PurgeTally {
  updateSeq: number;
  purgeSeq: number;
  readonly #startSeq: number;
  readonly #startPurgeSeq: number;
  liveDelta = 0;
  deletedDelta = 0;
  dataDelta = 0;
  compactableDelta = 0;

  constructor(updateSeq: number, purgeSeq: number) {
    this.updateSeq = updateSeq;
    this.purgeSeq = purgeSeq;
    this.#startSeq = updateSeq;
    this.#startPurgeSeq = purgeSeq;
  }

  /** A document purged: its counters move; answers the sequence it moves to (when it remains). */
  document(storedDeleted: boolean, plan: DocumentPurge): number | undefined {
    this.purgeSeq++;
    this.liveDelta -= Number(!storedDeleted);
    this.deletedDelta -= Number(storedDeleted);
    if (plan.remaining === undefined) return undefined;
    this.liveDelta += Number(!plan.remaining.deleted);
    this.deletedDelta += Number(plan.remaining.deleted);
    return ++this.updateSeq;
  }

  body(leaf: boolean, size: number): void {
    if (leaf) this.dataDelta -= size;
    else this.compactableDelta -= size;
  }

  /** Whether anything was purged; then the update sequence moves at least once, as CouchDB's. */
  finish(): boolean {
    if (this.purgeSeq === this.#startPurgeSeq) return false;
    if (this.updateSeq === this.#startSeq) this.updateSeq++;
    return true;
  }
}
