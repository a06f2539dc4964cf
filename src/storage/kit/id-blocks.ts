/**
 * Live documents counted per block of ids (`id_blocks`), so that `_all_docs` finds the offset of a
 * start key by summing the counts of the blocks before the key's block and counting inside that one
 * block, not by counting every document before the key (CouchDB reads the same counts from its
 * B-tree's inner nodes). A block holds the ids from its first id up to the next block's; block ''
 * holds the ids below every other block. A block that reaches ID_BLOCK_SPLIT live documents splits
 * at its (ID_BLOCK_HALF + 1)th.
 *
 * A second level (`id_groups`) counts the live documents of runs of blocks, so that the sum before a
 * block reads a few groups and the blocks of one group: a group starts at a block's first id and
 * holds the blocks up to the next group's; one that reaches GROUP_SPLIT blocks splits at its
 * (GROUP_HALF + 1)th. At 10⁶ documents there are about 1 000 blocks in about 12 groups.
 *
 * The writer calls `countIdChanges` once per write transaction with every document whose liveness
 * changed: the changes are summed per block first, so a batch of 1 000 documents costs one read of
 * the block bounds and one update per block it touches, not one per document (per-row triggers made
 * bulk writes 1.4× slower).
 */
import { compareIds } from './view-blocks.js';

const ID_BLOCK_SPLIT = 2048;
const ID_BLOCK_HALF = 1024;
const GROUP_SPLIT = 128;
const GROUP_HALF = 64;

/** +1: the document became live (created, or recreated after a deletion); -1: it stopped being live. */
export interface IdLiveChange {
  id: string;
  delta: number;
}

/** The change a write makes to the live count of its document's block. */
export const liveDelta = (wasLive: boolean, isLive: boolean): number => Number(isLive) - Number(wasLive);

/** What `countIdChanges` reads and writes, inside the caller's write transaction. */
export interface IdBlockStore {
  /** First ids of the blocks from the one holding `low` to the last one starting at or below `high`, ascending. */
  blocksBetween(dbId: number, low: string, high: string): string[];
  /** Adds `delta` to the block starting at `firstId` (creating it); answers its live count. */
  add(dbId: number, firstId: string, delta: number): number;
  /** The live id `offset` live ids after `firstId` (0: the first live id at or after it). */
  liveIdAt(dbId: number, firstId: string, offset: number): string | undefined;
  /** Starts a block at `firstId` with `live` documents, and sets the count of the block it came from. */
  split(dbId: number, from: string, fromLive: number, firstId: string, live: number): void;
  /** First ids of the groups from the one holding `low` to the last one starting at or below `high`, ascending. */
  groupsBetween(dbId: number, low: string, high: string): string[];
  /** Adds `delta` to the group starting at `firstId` (creating it). */
  addToGroup(dbId: number, firstId: string, delta: number): void;
  /** The group holding the block that starts at `block`: its first id, its blocks, and the first id of its (GROUP_HALF + 1)th block. */
  groupOf(dbId: number, block: string, half: number): { first: string; blocks: number; middle: string | undefined };
  /** Starts a group at block `first`, taking the blocks from there to the end of the group it came from, `from`. */
  splitGroup(dbId: number, from: string, first: string): void;
}

/** The summed change of each block that `changes` fall in; `firsts` are ascending block starts. */
export function deltasByBlock(firsts: readonly string[], changes: readonly IdLiveChange[]): Map<string, number> {
  const deltas = new Map<string, number>();
  for (const { id, delta } of changes) {
    // The last block starting at or below the id; '' when none does (block '' not created yet).
    let low = 0;
    let high = firsts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareIds(firsts[middle]!, id) <= 0) low = middle + 1;
      else high = middle;
    }
    const first = low === 0 ? '' : firsts[low - 1]!;
    deltas.set(first, (deltas.get(first) ?? 0) + delta);
  }
  return deltas;
}

/** Applies the liveness changes of one write transaction to the id blocks of database `dbId`. */
export function countIdChanges(store: IdBlockStore, dbId: number, changes: readonly IdLiveChange[]): void {
  let low: string | undefined;
  let high: string | undefined;
  for (const { id, delta } of changes) {
    if (delta === 0) continue;
    if (low === undefined || compareIds(id, low) < 0) low = id;
    if (high === undefined || compareIds(id, high) > 0) high = id;
  }
  if (low === undefined || high === undefined) return;
  const deltas = deltasByBlock(store.blocksBetween(dbId, low, high), changes);
  const blocks = [...deltas].map(([id, delta]) => ({ id, delta }));
  const firsts = blocks.map((block) => block.id).sort(compareIds);
  for (const [first, delta] of deltasByBlock(store.groupsBetween(dbId, firsts[0]!, firsts[firsts.length - 1]!), blocks)) {
    if (delta !== 0) store.addToGroup(dbId, first, delta);
  }
  for (const [first, delta] of deltas) {
    if (delta === 0) continue;
    const live = store.add(dbId, first, delta);
    if (live >= ID_BLOCK_SPLIT) splitBlock(store, dbId, first, live);
  }
}

/** Splits a full block into blocks of ID_BLOCK_HALF live documents and a remainder below ID_BLOCK_SPLIT. */
function splitBlock(store: IdBlockStore, dbId: number, first: string, live: number): void {
  let from = first;
  let left = live;
  while (left >= ID_BLOCK_SPLIT) {
    const next = store.liveIdAt(dbId, from, ID_BLOCK_HALF);
    // Counts and rows disagree only if a writer bypassed countIdChanges; leave the block whole.
    if (next === undefined) return;
    store.split(dbId, from, ID_BLOCK_HALF, next, left - ID_BLOCK_HALF);
    splitFullGroup(store, dbId, next);
    from = next;
    left -= ID_BLOCK_HALF;
  }
}

/** Splits the group of a block that has just been made once it holds GROUP_SPLIT blocks. */
function splitFullGroup(store: IdBlockStore, dbId: number, block: string): void {
  const group = store.groupOf(dbId, block, GROUP_HALF);
  if (group.blocks >= GROUP_SPLIT && group.middle !== undefined) store.splitGroup(dbId, group.first, group.middle);
}
