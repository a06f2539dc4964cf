import { stem, type RevisionTree } from '../../revisions/revision-tree.js';

/** Bodies reclaimed (or documents' trees stemmed) per transaction by `compact`. */
export const COMPACTION_SLICE = 500;

/** What one compaction slice reclaimed. */
export interface ReclaimedSlice {
  bodies: number;
  bytes: number;
}

/** Runs compaction slices until one reclaims less than a full slice; answers the bytes reclaimed. */
export async function compactInSlices(slice: () => Promise<ReclaimedSlice>): Promise<number> {
  let bytes = 0;
  for (;;) {
    const reclaimed = await slice();
    bytes += reclaimed.bytes;
    if (reclaimed.bodies < COMPACTION_SLICE) return bytes;
  }
}

/** Where a stemming pass has got to: the last document id it read, and how many it read. */
export interface StemmedSlice {
  lastId: string;
  read: number;
}

/**
 * A document's revision tree stemmed to the database's `_revs_limit`, as JSON, or undefined when
 * it already holds no more (CouchDB's compaction stems every tree, so a lowered `_revs_limit`
 * reaches documents written before). Stemming drops only revisions above the leaves: their bodies
 * are superseded ones, which the rest of the compaction reclaims.
 */
export function stemmedTree(treeJson: string, revsLimit: number): string | undefined {
  const tree = JSON.parse(treeJson) as RevisionTree;
  const stemmed = stem(tree, revsLimit);
  return Object.keys(stemmed).length === Object.keys(tree).length ? undefined : JSON.stringify(stemmed);
}

/** Runs stemming slices, each starting after the last id of the one before, until one reads less than a full slice. */
export async function stemInSlices(slice: (afterId: string) => Promise<StemmedSlice>): Promise<void> {
  let afterId = '';
  for (;;) {
    const done = await slice(afterId);
    if (done.read < COMPACTION_SLICE) return;
    afterId = done.lastId;
  }
}
