/**
 * CouchDB revision trees as pure data: every backend stores a document's tree as the JSON of a
 * `RevisionTree` and edits it only through these functions, so conflict rules, winner choice and
 * generated revisions are identical whichever backend (or server) applied an edit.
 *
 * @example
 * const created = applyEdit(undefined, { body: { a: 1 }, deleted: false })
 * if (created.ok) winningRevision(created.tree) // '1-…' (32 hex digits)
 */
import { createHash } from 'node:crypto';
import type { Json, JsonObject } from '../json/json.js';

/** One revision: its parent (null for a root, or when older revisions were stemmed) and whether it is a tombstone. */
export interface RevisionNode {
  parent: string | null;
  deleted: boolean;
}

/** Every known revision of one document, keyed by full rev (`N-hash`). JSON-serialisable. */
export type RevisionTree = Record<string, RevisionNode>;

/** CouchDB's default `_revs_limit`. */
export const REVS_LIMIT = 1000;

export interface ParsedRevision {
  generation: number;
  hash: string;
}

// Hashes are generated as 32 lowercase hex digits, but replication peers may send other
// alphanumeric hashes; anything else (spaces, `__proto__`-like keys) is refused.
const REV_PATTERN = /^([1-9][0-9]*)-([0-9A-Za-z]+)$/;

/** Splits `N-hash`; undefined when malformed. */
export function parseRevision(rev: string): ParsedRevision | undefined {
  const match = REV_PATTERN.exec(rev);
  if (match === null) return undefined;
  const generation = Number(match[1]);
  if (!Number.isSafeInteger(generation)) return undefined;
  return { generation, hash: match[2] };
}

function generationOf(rev: string): number {
  return Number(rev.slice(0, rev.indexOf('-')));
}

function hashOf(rev: string): string {
  return rev.slice(rev.indexOf('-') + 1);
}

/** Orders revisions by generation, then hash by string comparison: CouchDB's `{Pos, RevId}` order. */
export function compareRevisions(a: string, b: string): number {
  const byGeneration = generationOf(a) - generationOf(b);
  if (byGeneration !== 0) return byGeneration;
  const ha = hashOf(a);
  const hb = hashOf(b);
  return ha < hb ? -1 : ha > hb ? 1 : 0;
}

/** JSON with object keys sorted at every level, so equal values always serialise identically. */
export function canonicalJson(value: Json): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
}

/**
 * The hash of a new revision. Deterministic so that the same edit applied on two servers (or
 * retried after a lost response) yields the same rev, as CouchDB's `new_revid` does.
 */
export function revisionHash(deleted: boolean, previousRev: string | null, body: JsonObject): string {
  return createHash('md5').update(canonicalJson([deleted, previousRev, body])).digest('hex');
}

function has(tree: RevisionTree, rev: string): boolean {
  return Object.hasOwn(tree, rev);
}

/** Leaves (revisions nobody descends from), winner first, in CouchDB's order. */
export function sortedLeaves(tree: RevisionTree): string[] {
  const parents = new Set<string>();
  for (const rev of Object.keys(tree)) {
    const parent = tree[rev].parent;
    if (parent !== null) parents.add(parent);
  }
  const leaves = Object.keys(tree).filter((rev) => !parents.has(rev));
  // Live leaves beat deleted ones, then the highest {generation, hash} wins: descending order.
  return leaves.sort((a, b) => {
    const liveness = Number(tree[a].deleted) - Number(tree[b].deleted);
    return liveness !== 0 ? liveness : compareRevisions(b, a);
  });
}

/** The winning revision; undefined for an empty tree. */
export function winningRevision(tree: RevisionTree): string | undefined {
  return sortedLeaves(tree)[0];
}

export interface Conflicts {
  /** Live non-winning leaves, in winner order. */
  conflicts: string[];
  /** Deleted non-winning leaves, in winner order. */
  deletedConflicts: string[];
}

export function listConflicts(tree: RevisionTree): Conflicts {
  const [, ...others] = sortedLeaves(tree);
  return {
    conflicts: others.filter((rev) => !tree[rev].deleted),
    deletedConflicts: others.filter((rev) => tree[rev].deleted),
  };
}

/** `rev` and its known ancestors, newest first; empty when `rev` is not in the tree. */
export function revisionPath(tree: RevisionTree, rev: string): string[] {
  const path: string[] = [];
  let current: string | null = rev;
  while (current !== null && has(tree, current)) {
    path.push(current);
    current = tree[current].parent;
  }
  return path;
}

/**
 * Drops revisions more than `limit` steps above every leaf (CouchDB's `couch_key_tree:stem`).
 * Leaves are always kept; a revision whose parent was dropped becomes a root.
 */
export function stem(tree: RevisionTree, limit: number = REVS_LIMIT): RevisionTree {
  const keep = new Set<string>();
  for (const leaf of sortedLeaves(tree)) {
    let current: string | null = leaf;
    for (let depth = 0; current !== null && depth < limit && has(tree, current); depth++) {
      keep.add(current);
      current = tree[current].parent;
    }
  }
  if (keep.size === Object.keys(tree).length) return tree;
  const stemmed: RevisionTree = {};
  for (const rev of keep) {
    const { parent, deleted } = tree[rev];
    stemmed[rev] = { parent: parent !== null && keep.has(parent) ? parent : null, deleted };
  }
  return stemmed;
}

/** A new_edits=true edit, as the client sent it. */
export interface NewEdit {
  body: JsonObject;
  deleted: boolean;
  /** `_rev`: the leaf being edited; undefined to create or recreate. */
  baseRev?: string;
}

export type TreeUpdate =
  | {
      ok: true;
      tree: RevisionTree;
      /** The edit's revision (new, or the existing leaf of a replayed path). */
      rev: string;
      /** False when the tree did not change (a replicated revision that was already known). */
      changed: boolean;
      /** Revisions that were leaves before and are not any more: their bodies can be dropped. */
      obsoleteLeaves: string[];
    }
  | { ok: false; reason: 'conflict' };

const CONFLICT: TreeUpdate = { ok: false, reason: 'conflict' };

function leafSet(tree: RevisionTree): Set<string> {
  return new Set(sortedLeaves(tree));
}

function isLeaf(tree: RevisionTree, rev: string): boolean {
  return has(tree, rev) && leafSet(tree).has(rev);
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
function editBase(tree: RevisionTree | undefined, edit: NewEdit): string | null | 'conflict' {
  const exists = tree !== undefined && Object.keys(tree).length > 0;
  if (edit.baseRev !== undefined) {
    return exists && isLeaf(tree, edit.baseRev) ? edit.baseRev : 'conflict';
  }
  if (!exists) return null;
  const winner = winningRevision(tree) as string;
  return tree[winner].deleted ? winner : 'conflict';
}

/** Applies a new_edits=true edit (CouchDB's rules, see `editBase`), stemming to `revsLimit`. */
export function applyEdit(
  tree: RevisionTree | undefined,
  edit: NewEdit,
  revsLimit: number = REVS_LIMIT,
): TreeUpdate {
  const base = editBase(tree, edit);
  if (base === 'conflict') return CONFLICT;
  const generation = base === null ? 1 : generationOf(base) + 1;
  const rev = `${generation}-${revisionHash(edit.deleted, base, edit.body)}`;
  const next: RevisionTree = { ...tree, [rev]: { parent: base, deleted: edit.deleted } };
  const obsoleteLeaves = base === null ? [] : [base];
  return { ok: true, tree: stem(next, revsLimit), rev, changed: true, obsoleteLeaves };
}

/**
 * True when `revPath` (newest first) is a usable replicated path: well-formed revisions whose
 * generations decrease by exactly one.
 */
export function isValidRevisionPath(revPath: readonly string[]): boolean {
  if (revPath.length === 0) return false;
  let previous: number | undefined;
  for (const rev of revPath) {
    const parsed = parseRevision(rev);
    if (parsed === undefined) return false;
    if (previous !== undefined && parsed.generation !== previous - 1) return false;
    previous = parsed.generation;
  }
  return true;
}

/**
 * Merges a new_edits=false revision path (newest first), as replication does: missing revisions
 * are inserted along the path, a revision already known is a no-op, and nothing ever conflicts.
 * `deleted` applies to the path's newest revision. The caller validates with `isValidRevisionPath`.
 */
export function mergePath(
  tree: RevisionTree | undefined,
  revPath: readonly string[],
  deleted: boolean,
  revsLimit: number = REVS_LIMIT,
): TreeUpdate {
  if (!isValidRevisionPath(revPath)) {
    throw new TypeError(`invalid revision path: ${JSON.stringify(revPath)}`);
  }
  const current = tree ?? {};
  const rev = revPath[0];
  if (has(current, rev)) return { ok: true, tree: current, rev, changed: false, obsoleteLeaves: [] };
  const leavesBefore = leafSet(current);
  const next: RevisionTree = { ...current };
  for (let i = revPath.length - 1; i >= 0; i--) {
    const r = revPath[i];
    const parent = i + 1 < revPath.length ? revPath[i + 1] : null;
    if (!has(next, r)) {
      next[r] = { parent, deleted: i === 0 ? deleted : false };
    } else if (next[r].parent === null && parent !== null) {
      // The tree had lost this revision's ancestors to stemming; the path knows them again.
      next[r] = { ...next[r], parent };
    }
  }
  const obsoleteLeaves = revPath.slice(1).filter((r) => leavesBefore.has(r));
  return { ok: true, tree: stem(next, revsLimit), rev, changed: true, obsoleteLeaves };
}

/** What storage tells about one revision besides its body (`StoredRevision` without id, body, seq). */
export interface RevisionDescription {
  deleted: boolean;
  /** `rev` and its known ancestors, newest first, as hashes without the `N-`. */
  revisionPath: string[];
  revisionStart: number;
  conflicts: string[];
  deletedConflicts: string[];
}

/** The metadata of `rev` (which must be in `tree`) as `StoredRevision` carries it. */
export function describeRevision(tree: RevisionTree, rev: string): RevisionDescription {
  return {
    deleted: tree[rev]?.deleted ?? false,
    revisionPath: revisionPath(tree, rev).map(hashOf),
    revisionStart: generationOf(rev),
    ...listConflicts(tree),
  };
}

/** The leaves that descend from `rev` (itself when it is a leaf), in winner order. */
export function leavesFrom(tree: RevisionTree, rev: string): string[] {
  if (!has(tree, rev)) return [];
  return sortedLeaves(tree).filter((leaf) => revisionPath(tree, leaf).includes(rev));
}

export interface RevisionSelection {
  /** Leaves to open, in answer order, without duplicates. */
  found: string[];
  /** Asked revisions that cannot be opened: unknown, or (without `latest`) no longer leaves. */
  missing: string[];
}

/**
 * Which revisions `open_revs` answers for one document (CouchDB's `open_doc_revs`): `all` gives
 * every leaf, winner first; a list gives each asked revision that is a leaf, in the asked order,
 * and with `latest` the leaves descending from an asked interior revision instead. Only leaves keep
 * a body (as CouchDB after compaction), so an interior revision without `latest` is missing.
 */
export function selectRevisions(
  tree: RevisionTree | undefined,
  revs: 'all' | readonly string[],
  latest: boolean,
): RevisionSelection {
  if (revs === 'all') return { found: tree === undefined ? [] : sortedLeaves(tree), missing: [] };
  const found: string[] = [];
  const missing: string[] = [];
  const leaves = tree === undefined ? new Set<string>() : leafSet(tree);
  for (const rev of new Set(revs)) {
    if (tree === undefined || !has(tree, rev)) {
      missing.push(rev);
    } else if (leaves.has(rev)) {
      if (!found.includes(rev)) found.push(rev);
    } else if (latest) {
      for (const leaf of leavesFrom(tree, rev)) if (!found.includes(leaf)) found.push(leaf);
    } else {
      missing.push(rev);
    }
  }
  return { found, missing };
}

export interface RevisionsDiff {
  /** Asked revisions this tree does not know, in the asked order, without duplicates. */
  missing: string[];
  /** Leaves older than some missing revision: what the sender may build on (CouchDB's order). */
  possibleAncestors: string[];
}

/**
 * `_revs_diff` for one document (CouchDB's `couch_db:get_missing_revs`). An empty `missing`
 * means the document is left out of the answer.
 */
export function revisionsDiff(tree: RevisionTree | undefined, revs: readonly string[]): RevisionsDiff {
  const missing = [...new Set(revs)].filter((rev) => tree === undefined || !has(tree, rev));
  if (tree === undefined || missing.length === 0) return { missing, possibleAncestors: [] };
  const generations = missing.map(generationOf);
  // CouchDB folds over the leaves in winner order, prepending: the answer comes out reversed.
  const possibleAncestors = sortedLeaves(tree)
    .filter((leaf) => generations.some((generation) => generationOf(leaf) < generation))
    .reverse();
  return { missing, possibleAncestors };
}
