/**
 * How an index is built from the change sequence, shared by view indexes (indexer.ts) and search
 * indexes (src/search/search-indexer.ts): batches of changes read in order, each batch's function
 * calls cut in two calls sent at once (the sandbox pool gives each its own worker,
 * `[divan] js_workers`), and a pipeline in which the sandbox runs one batch while the main thread
 * stores the previous one and reads the next. Batches are stored in order, each with its last
 * sequence, so an interrupted build resumes where it stopped. After a purge the index is recorded
 * at the database's sequence (`catchUpTo`), and purged documents are dropped (`purgedAway`).
 */
import type { ChangeRow, Storage } from '../storage/storage.js';

/** Changes read, run and stored per transaction. */
export const INDEX_BATCH = 1000;
/** Batches with at least this many documents are run in two calls at once. */
const SPLIT_FROM = 200;

/** `run` over `docs`, in two calls at once when there are enough of them; results in order. */
export async function inHalves<D, R>(docs: readonly D[], run: (part: readonly D[]) => Promise<R[]>): Promise<R[]> {
  if (docs.length < SPLIT_FROM) return docs.length === 0 ? [] : run(docs);
  const half = Math.ceil(docs.length / 2);
  const [first, second] = await Promise.all([run(docs.slice(0, half)), run(docs.slice(half))]);
  return first.concat(second);
}

interface PipelineSteps<T> {
  /** The changes after `since`, at most `limit`. */
  read(since: number, limit: number): Promise<ChangeRow[]>;
  /** What one batch stores (run while the batch before it is stored). */
  index(changes: readonly ChangeRow[]): Promise<T>;
  /** Stores a batch and records `seq` as reached, in one transaction. */
  store(indexed: T, seq: number): Promise<void>;
  /** Changes stored so far. */
  progress?(done: number): void;
  /** Whether `store` runs off the main thread, so that the next batch may be read while it runs. */
  readonly storesElsewhere?: boolean;
}

/**
 * The batches from `seq` on, through the pipeline; answers the last sequence stored. One store is
 * in flight at a time, in order. A store that runs off this thread (`storesElsewhere`: a search
 * index's, in a thread of its own on SQLite, sqlite-search-writer.ts) runs beside the next read
 * once it has had a turn of the event loop to start; another is awaited before the next read.
 */
async function catchUp<T>(seq: number, steps: PipelineSteps<T>): Promise<number> {
  let pending: { seq: number; count: number; indexed: Promise<T> } | undefined;
  let storing: Promise<void> = Promise.resolve();
  let [read, stored, done] = [seq, seq, 0];
  const store = async (batch: NonNullable<typeof pending>): Promise<void> => {
    await steps.store(await batch.indexed, batch.seq);
    [stored, done] = [batch.seq, done + batch.count];
    steps.progress?.(done);
  };
  for (;;) {
    const changes = await steps.read(read, INDEX_BATCH);
    const next = changes.length === 0 ? undefined : { seq: changes[changes.length - 1]!.seq, count: changes.length, indexed: steps.index(changes) };
    // Each is awaited later; a failure meanwhile must not go unobserved.
    next?.indexed.catch(() => undefined);
    await storing;
    if (pending) {
      storing = store(pending);
      storing.catch(() => undefined);
      await (steps.storesElsewhere === true ? new Promise((turn) => setImmediate(turn)) : storing);
    }
    pending = next;
    if (next === undefined || changes.length < INDEX_BATCH) {
      await storing;
      if (next !== undefined) await store(next);
      return stored;
    }
    read = next.seq;
  }
}

/**
 * `catchUp`, then the index recorded as having reached `target` (the database's update sequence
 * when the update began). A purge moves that sequence without leaving a change to read: once every
 * change is read, the sequences left are such, and without this the index would never be current
 * and every query would update it again.
 */
export async function catchUpTo<T>(seq: number, target: number, steps: PipelineSteps<T> & { reached(seq: number): Promise<void> }): Promise<number> {
  const stored = await catchUp(seq, steps);
  if (stored >= target) return stored;
  await steps.reached(target);
  return target;
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
