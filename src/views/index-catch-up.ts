/**
 * The catch-up loop shared by the view indexer (indexer.ts) and the search indexer
 * (src/search/search-indexer.ts): the changes after the sequence an index reached, read in
 * batches, indexed, and stored one batch per transaction with the batch's last sequence, so an
 * interrupted build resumes where it stopped.
 */
import type { ChangeRow, Storage } from '../storage/storage.js';

/** Changes read, indexed and stored per transaction. */
export const INDEX_BATCH = 1000;

export interface CatchUp<T> {
  storage: Storage;
  db: string;
  /** The sequence the index reached. */
  from: number;
  /** The database's update sequence when the update began. */
  target: number;
  /** `_conflicts` on the changes' documents. */
  conflicts?: boolean;
  /**
   * Whether a batch may be indexed while the one before it is stored (the view indexer: the
   * sandbox maps while the main thread writes); without, each batch is indexed after the one
   * before it is stored, for an indexer whose batches learn from one another.
   */
  overlap: boolean;
  index: (changes: readonly ChangeRow[]) => Promise<T[]>;
  store: (documents: T[], seq: number) => Promise<void>;
  progress?: (done: number) => void;
}

/**
 * Brings an index from `from` to at least `target`; answers the sequence reached. A purge moves
 * the database's sequence without leaving a change to read: once every change is read, the
 * sequences left between the last change and `target` are such, and the index is recorded as
 * having reached `target` (else it would never be current, and every query would update it again).
 */
export async function catchUp<T>(job: CatchUp<T>): Promise<number> {
  const stored = await readAndStore(job);
  if (stored >= job.target) return stored;
  await job.store([], job.target);
  return job.target;
}

async function readAndStore<T>(job: CatchUp<T>): Promise<number> {
  const { storage, db } = job;
  let pending: { seq: number; count: number; indexed: Promise<T[]> } | undefined;
  let [read, stored, done] = [job.from, job.from, 0];
  const store = async (batch: NonNullable<typeof pending>): Promise<void> => {
    await job.store(await batch.indexed, batch.seq);
    [stored, done] = [batch.seq, done + batch.count];
    job.progress?.(done);
  };
  for (;;) {
    const changes = await storage.changes(db, { since: read, limit: INDEX_BATCH, includeDocs: true, ...(job.conflicts === true ? { conflicts: true } : {}) });
    if (!job.overlap && pending) {
      await store(pending);
      pending = undefined;
    }
    const next = changes.length === 0 ? undefined : { seq: changes[changes.length - 1]!.seq, count: changes.length, indexed: job.index(changes) };
    // Awaited once the batch before it is stored; a failure meanwhile must not go unobserved.
    next?.indexed.catch(() => undefined);
    if (pending) await store(pending);
    pending = next;
    if (next === undefined) return stored;
    read = next.seq;
    if (changes.length < INDEX_BATCH) {
      await store(next);
      return stored;
    }
  }
}

/**
 * A purge that removed a document entirely leaves no change to read: the ids of the purged
 * documents (of the purges the database remembers) that no longer exist, whose entries an index
 * drops. A document only partly purged got a new sequence and is indexed again as any change.
 */
export async function purgedAway(storage: Storage, db: string): Promise<string[]> {
  const ids = [...new Set((await storage.purgedInfos(db)).map((purge) => purge.id))];
  const trees = await storage.revisionTrees(db, ids);
  return ids.filter((_, i) => trees[i] === undefined);
}
