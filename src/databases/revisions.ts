import { canonicalRevision } from '../revisions/revision-text.js';
import { revisionsDiff } from '../revisions/revision-tree.js';
import { LoopTurns } from '../turns/loop-turns.js';
import type { OpenedDatabase } from './opened-database.js';

/** A full revision (`N-id`) as the revision trees store it; undefined when malformed. */
export function revisionOf(rev: unknown): string | undefined {
  return canonicalRevision(rev);
}

interface RevisionDiff {
  missing: string[];
  possibleAncestors: string[];
}

/** Documents whose trees are read and compared per step: the event loop gets a turn between two. */
const DOCUMENTS_PER_STEP = 1000;

/**
 * `_revs_diff`: per asked document, the revisions this database lacks and what it has before them.
 * Read and compared a step at a time; stops with `clientGone` once `signal` aborts.
 */
export async function revisionDiffs(opened: OpenedDatabase, asked: readonly [string, string[]][], signal?: AbortSignal): Promise<RevisionDiff[]> {
  const turns = LoopTurns.until(signal);
  const diffs: RevisionDiff[] = [];
  for (let start = 0; start < asked.length; start += DOCUMENTS_PER_STEP) {
    await turns.maybeYield();
    const step = asked.slice(start, start + DOCUMENTS_PER_STEP);
    const trees = await opened.revisionTrees(step.map(([id]) => id));
    step.forEach(([, revs], i) => diffs.push(revisionsDiff(trees[i], revs)));
  }
  return diffs;
}
