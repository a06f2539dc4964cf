import { parseRevision, revisionsDiff } from '../storage/revision-tree.js';
import type { OpenedDatabase } from './opened-database.js';

/** A full revision (`N-hash`) as the revision trees read it. */
export function isRevision(rev: unknown): rev is string {
  return typeof rev === 'string' && parseRevision(rev) !== undefined;
}

export interface RevisionDiff {
  missing: string[];
  possibleAncestors: string[];
}

/** `_revs_diff`: per asked document, the revisions this database lacks and what it has before them. */
export async function revisionDiffs(opened: OpenedDatabase, asked: readonly [string, string[]][]): Promise<RevisionDiff[]> {
  const trees = await opened.revisionTrees(asked.map(([id]) => id));
  return asked.map(([, revs], i) => revisionsDiff(trees[i], revs));
}
