/**
 * CouchDB revision trees as pure data: every backend stores a document's tree as the JSON of a
 * `RevisionTree`, reads it through these functions and edits it only through tree-editor.ts, so
 * conflict rules, winner choice and generated revisions are identical whichever backend (or
 * server) applied an edit.
 *
 * @example
 * winningRevision({ '1-a': { parent: null, deleted: false }, '2-b': { parent: '1-a', deleted: false } }) // '2-b'
 */
import crypto from 'node:crypto';
import type { Json, JsonObject } from '../json/json.js';
import { compareRevisions, generationOf, parseRevision, revisionIdOf } from './revision-text.js';

/** One revision: its parent (null for a root, or when older revisions were stemmed) and whether it is a tombstone. */
interface RevisionNode {
  parent: string | null;
  deleted: boolean;
}

/** Every known revision of one document, keyed by full rev (`N-hash`). JSON-serialisable. */
export type RevisionTree = Record<string, RevisionNode>;

/** CouchDB's default `_revs_limit`. */
export const REVS_LIMIT = 1000;

/** Whether every object in `value` already lists its keys in sorted order (then JSON.stringify is canonical). */
function keysSorted(value: Json): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) return value.every(keysSorted);
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    if ((i > 0 && !(keys[i - 1]! < keys[i]!)) || !keysSorted(value[keys[i]!]!)) return false;
  }
  return true;
}

function sortedJson(value: Json): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + sortedJson(value[i]!);
    return `${out}]`;
  }
  const keys = Object.keys(value).sort();
  out = '{';
  for (let i = 0; i < keys.length; i++) out += `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:${sortedJson(value[keys[i]!]!)}`;
  return `${out}}`;
}

/**
 * JSON with object keys sorted at every level, so equal values always serialise identically.
 * Documents whose keys already come sorted (a walk that allocates nothing tells) take the native
 * JSON.stringify, several times faster than building the text piece by piece.
 */
export function canonicalJson(value: Json): string {
  return keysSorted(value) ? JSON.stringify(value) : sortedJson(value);
}

/** One-shot md5 where Node has it (20.12+): no Hash object per revision. */
const md5Hex: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('md5', text, 'hex') : (text) => crypto.createHash('md5').update(text).digest('hex');

/**
 * The hash of a new revision. Deterministic so that the same edit applied on two servers (or
 * retried after a lost response) yields the same rev, as CouchDB's `new_revid` does.
 */
export function revisionHash(deleted: boolean, previousRev: string | null, body: JsonObject): string {
  return md5Hex(canonicalJson([deleted, previousRev, body]));
}

function has(tree: RevisionTree, rev: string): boolean {
  return Object.hasOwn(tree, rev);
}

/** CouchDB's winner order: live leaves beat deleted ones, then the highest {generation, hash}. */
export function compareLeaves(tree: RevisionTree, a: string, b: string): number {
  const liveness = Number(tree[a].deleted) - Number(tree[b].deleted);
  return liveness !== 0 ? liveness : compareRevisions(b, a);
}

/** Leaves (revisions nobody descends from), winner first, in CouchDB's order. */
export function sortedLeaves(tree: RevisionTree): string[] {
  return [...leavesOf(tree)].sort((a, b) => compareLeaves(tree, a, b));
}

/** The winning revision; undefined for an empty tree. */
export function winningRevision(tree: RevisionTree): string | undefined {
  return sortedLeaves(tree)[0];
}

interface Conflicts {
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

/** Leaves of `tree`: the revisions no other revision names as its parent. */
export function leavesOf(tree: RevisionTree): Set<string> {
  const parents = new Set<string>();
  for (const rev of Object.keys(tree)) {
    const parent = tree[rev].parent;
    if (parent !== null) parents.add(parent);
  }
  return new Set(Object.keys(tree).filter((rev) => !parents.has(rev)));
}

/**
 * Drops revisions more than `limit` steps above every leaf (CouchDB's `couch_key_tree:stem`).
 * Leaves are always kept; a revision whose parent was dropped becomes a root. `leaves` may be given
 * when the caller already knows them. O(n log n): distances to the nearest leaf are propagated from
 * the newest generation down, as a child's generation is always its parent's plus one.
 */
export function stem(tree: RevisionTree, limit: number = REVS_LIMIT, leaves: ReadonlySet<string> = leavesOf(tree)): RevisionTree {
  const revs = Object.keys(tree);
  // A revision `limit` steps above a leaf needs a chain of limit + 1 revisions.
  if (revs.length <= limit) return tree;
  const distance = new Map<string, number>();
  for (const leaf of leaves) distance.set(leaf, 0);
  const generations = new Map(revs.map((rev) => [rev, generationOf(rev)]));
  revs.sort((a, b) => (generations.get(b) as number) - (generations.get(a) as number));
  for (const rev of revs) {
    const parent = tree[rev].parent;
    const own = distance.get(rev);
    if (parent === null || own === undefined) continue;
    const known = distance.get(parent);
    if (known === undefined || own + 1 < known) distance.set(parent, own + 1);
  }
  const keep = revs.filter((rev) => (distance.get(rev) ?? limit) < limit);
  if (keep.length === revs.length) return tree;
  const kept = new Set(keep);
  const stemmed: RevisionTree = {};
  for (const rev of keep) {
    const { parent, deleted } = tree[rev];
    stemmed[rev] = { parent: parent !== null && kept.has(parent) ? parent : null, deleted };
  }
  return stemmed;
}

/**
 * True when `revPath` (newest first) is a usable replicated path: well-formed revisions of
 * generation 1 or more whose generations decrease by exactly one.
 */
export function isValidRevisionPath(revPath: readonly string[]): boolean {
  if (revPath.length === 0) return false;
  let previous: number | undefined;
  for (const rev of revPath) {
    const parsed = parseRevision(rev);
    if (parsed === undefined || parsed.generation < 1) return false;
    if (previous !== undefined && parsed.generation !== previous - 1) return false;
    previous = parsed.generation;
  }
  return true;
}

/** What storage tells about one revision besides its body (`StoredRevision` without id, body, seq). */
interface RevisionDescription {
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
    revisionPath: revisionPath(tree, rev).map(revisionIdOf),
    revisionStart: generationOf(rev),
    ...listConflicts(tree),
  };
}

/** The leaves that descend from `rev` (itself when it is a leaf), in winner order. */
export function leavesFrom(tree: RevisionTree, rev: string): string[] {
  if (!has(tree, rev)) return [];
  return sortedLeaves(tree).filter((leaf) => revisionPath(tree, leaf).includes(rev));
}

interface RevisionSelection {
  /** Revisions to open (leaves, or interior ones asked without `latest`), in answer order, without duplicates. */
  found: string[];
  /** Asked revisions the tree does not know. */
  missing: string[];
}

/**
 * Which revisions `open_revs` answers for one document (CouchDB's `open_doc_revs`): `all` gives
 * every leaf, winner first; a list gives each asked revision that is a leaf, in the asked order,
 * and with `latest` the leaves descending from an asked interior revision instead. An interior
 * revision without `latest` is found too: it opens while its body is kept (until compaction).
 */
export function selectRevisions(
  tree: RevisionTree | undefined,
  revs: 'all' | readonly string[],
  latest: boolean,
): RevisionSelection {
  if (revs === 'all') return { found: tree === undefined ? [] : sortedLeaves(tree), missing: [] };
  const found: string[] = [];
  const missing: string[] = [];
  const leaves = tree === undefined ? new Set<string>() : leavesOf(tree);
  for (const rev of new Set(revs)) {
    if (tree === undefined || !has(tree, rev)) {
      missing.push(rev);
    } else if (leaves.has(rev)) {
      if (!found.includes(rev)) found.push(rev);
    } else if (latest) {
      for (const leaf of leavesFrom(tree, rev)) if (!found.includes(leaf)) found.push(leaf);
    } else if (!found.includes(rev)) {
      found.push(rev);
    }
  }
  return { found, missing };
}

interface RevisionsDiff {
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
