import { canonicalRevision } from '../revisions/revision-text.js';
import { revisionsDiff } from '../revisions/revision-tree.js';
import type { OpenedDatabase } from './opened-database.js';

/** A full revision (`N-id`) as the revision trees store it; undefined when malformed. */
export function revisionOf(rev: unknown): string | undefined {
  return canonicalRevision(rev);
}

interface RevisionDiff {
  missing: string[];
  possibleAncestors: string[];
}

/** `_revs_diff`: per asked document, the revisions this database lacks and what it has before them. */
export async function revisionDiffs(opened: OpenedDatabase, asked: readonly [string, string[]][]): Promise<RevisionDiff[]> {
  const trees = await opened.revisionTrees(asked.map(([id]) => id));
  return asked.map(([, revs], i) => revisionsDiff(trees[i], revs));
}
