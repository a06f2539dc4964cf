/**
 * Brings a json index up to date from the database's change sequence before a query reads it, as
 * CouchDB's view updater does (`update: false` skips this). Changes are read in batches; each batch
 * is applied by storage only if the index is still where this updater found it, so requests (or
 * nodes) catching up the same index at once never corrupt it: the one that loses reads the new
 * position and goes on from there. Within one process, concurrent catch-ups of one index share one run.
 */
import type { OpenedDatabase } from '../databases/opened-database.js';
import type { JsonObject } from '../json/json.js';
import type { IndexUpdate } from '../storage/storage.js';
import { IndexKeyer, type MangoIndex } from './index-definitions.js';

/** Changes read (and index rows written) per transaction. */
const INDEX_BATCH = 1000;

/** Per storage, per index: the catch-up running, and the one queued to run after it. */
interface Runs {
  running?: Promise<void>;
  queued?: Promise<void>;
  /** The highest target of the callers waiting for the queued run. */
  queuedTarget: number;
}
const runs = new WeakMap<object, Map<string, Runs>>();

async function catchUp(opened: OpenedDatabase, index: MangoIndex, target: number): Promise<void> {
  const store = opened.storage.indexes;
  const keyer = new IndexKeyer(index);
  let seq = await store.indexedSeq(opened.db, index.signature);
  if (seq >= target) return;
  for (;;) {
    const rows = await opened.changes({ since: seq, limit: INDEX_BATCH, includeDocs: true });
    if (rows.length === 0) return;
    const updates: IndexUpdate[] = rows.map((row) => {
      if (row.deleted || row.id.startsWith('_design/') || row.body === undefined) return { id: row.id, key: undefined };
      const doc = { _id: row.id, _rev: row.changes[0]!, ...row.body } as JsonObject;
      return { id: row.id, key: keyer.keyOf(doc) };
    });
    const last = rows[rows.length - 1]!.seq;
    const applied = await store.applyUpdates(opened.db, index.signature, seq, last, updates);
    seq = applied ? last : await store.indexedSeq(opened.db, index.signature);
    if (applied ? rows.length < INDEX_BATCH : seq >= target) return;
  }
}

/**
 * Resolves once the index has caught up with `target` (the database's update sequence when the
 * query started; nothing to read when it is there already). A call while a
 * catch-up runs joins the one queued after it (which starts later, so it sees the caller's changes).
 */
export function updateIndex(opened: OpenedDatabase, index: MangoIndex, target: number): Promise<void> {
  let byIndex = runs.get(opened.storage);
  if (byIndex === undefined) {
    byIndex = new Map();
    runs.set(opened.storage, byIndex);
  }
  const key = `${opened.db}\u0000${index.signature}`;
  const state: Runs = byIndex.get(key) ?? { queuedTarget: 0 };
  byIndex.set(key, state);
  if (state.queued !== undefined) {
    state.queuedTarget = Math.max(state.queuedTarget, target);
    return state.queued;
  }
  const start = (runTarget: number): Promise<void> => {
    const run = catchUp(opened, index, runTarget).finally(() => {
      if (state.running === run) state.running = undefined;
      if (state.running === undefined && state.queued === undefined && byIndex!.get(key) === state) byIndex!.delete(key);
    });
    state.running = run;
    return run;
  };
  if (state.running === undefined) return start(target);
  state.queuedTarget = target;
  const queued = state.running.catch(() => undefined).then(() => {
    state.queued = undefined;
    return start(state.queuedTarget);
  });
  state.queued = queued;
  return queued;
}
