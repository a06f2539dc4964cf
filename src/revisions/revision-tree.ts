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
import { atom, binary, list, termToBinaryWithEjson, tuple, type Term } from '../json/erlang-term.js';
import { compareRevisions, generationOf, parseRevision, revisionIdBytes, revisionIdOf } from './revision-text.js';

/** One revision: its parent (null for a root, or when older revisions were stemmed) and whether it is a tombstone. */
interface RevisionNode {
  parent: string | null;
  deleted: boolean;
}

/** Every known revision of one document, keyed by full rev (`N-hash`). JSON-serialisable. */
export type RevisionTree = Record<string, RevisionNode>;

/** CouchDB's default `_revs_limit`. */
export const REVS_LIMIT = 1000;

/** One-shot md5 where Node has it (20.12+): no Hash object per revision. */
const md5Hex: (data: Buffer) => string =
  typeof crypto.hash === 'function' ? (data) => crypto.hash('md5', data, 'hex') : (data) => crypto.createHash('md5').update(data).digest('hex');

/**
 * The hash of a new revision, as CouchDB's `couch_db:new_revid`: the MD5 of
 * `term_to_binary([Deleted, OldStart, OldRev, Body, Atts], [{minor_version, 1}])`, where Body is the
 * document's own members in their order, and Atts the `{Name, Type, MD5}` of its attachments in
 * reverse order. The same edit therefore gets the same revision on Divan and on CouchDB (and on two
 * nodes, or when a lost response is retried). Numbers are seen as JSON.parse reads them: `1.0`
 * hashes as the integer 1 (CouchDB's jiffy keeps it a float), so such documents get another id.
 */
export function revisionHash(deleted: boolean, previousRev: string | null, body: JsonObject): string {
  const attachments = body['_attachments'];
  const head: Term[] = [
    atom(String(deleted)),
    { integer: previousRev === null ? 0 : generationOf(previousRev) },
    previousRev === null ? { integer: 0 } : { binary: revisionIdBytes(revisionIdOf(previousRev)) },
  ];
  return md5Hex(termToBinaryWithEjson(head, body, [list(digestedAttachments(attachments).reverse())], '_attachments'));
}

/** `{Name, Type, MD5}` per stub, in the document's order; a stub without an MD5 digest hashes an empty one. */
function digestedAttachments(attachments: Json | undefined): Term[] {
  if (attachments === null || typeof attachments !== 'object' || Array.isArray(attachments)) return [];
  return Object.entries(attachments).map(([name, stub]) => {
    const fields = stub !== null && typeof stub === 'object' && !Array.isArray(stub) ? stub : {};
    const type = typeof fields['content_type'] === 'string' ? fields['content_type'] : '';
    const digest = typeof fields['digest'] === 'string' && fields['digest'].startsWith('md5-') ? Buffer.from(fields['digest'].slice(4), 'base64') : Buffer.alloc(0);
    return tuple([binary(name), binary(type), { binary: digest }]);
  });
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
