/**
 * Brings a view index up to its database's update sequence: reads the changes since the sequence
 * the index reached, runs every map function of the group on the changed documents (not design
 * documents unless its `options.include_design`; a deleted document just loses its rows) and stores each document's new rows in place
 * of its old ones, one batch per transaction, so an interrupted build resumes where it stopped. One
 * updater per index at a time (`ViewStore.exclusive`: on PostgreSQL across nodes; whoever waited
 * finds the index already up to date). A map function that throws skips that document (logged).
 */
import { withoutEncodingInfo } from '../attachments/encoding.js';
import { keyEncoder } from '../collation/key-collation.js';
import { compareRaw } from '../collation/raw-compare.js';
import { isObject } from '../documents/document-json.js';
import { osProcessError } from '../errors/catalog.js';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { ChangeRow, EncodedRow, MappedDocument, Storage } from '../storage/storage.js';
import type { ActiveTasks, TaskHandle } from '../tasks/active-tasks.js';
import type { ViewGroup } from './view-group.js';
import { partitionKeyPrefix, partitionOf } from '../databases/partitions.js';
import type { FunctionOutcome, ViewFunctions } from './view-functions.js';
import { catchUpTo, inHalves, INDEX_BATCH, purgedAway } from './index-pipeline.js';

export { INDEX_BATCH } from './index-pipeline.js';

/** Builds with more changes than this show in `_active_tasks`. */
const TASK_THRESHOLD = INDEX_BATCH;

interface IndexerContext {
  storage: Storage;
  functions: ViewFunctions;
  tasks: ActiveTasks;
  log: Logger;
}

/** `prefix`: the encoded partition a partitioned index keys its rows by (view-ranges.ts reads it back as a range). */
function encodedRow(view: number, encoded: Buffer, key: Json, value: Json, prefix: Buffer | undefined): EncodedRow {
  return { view, key: prefix ? Buffer.concat([prefix, encoded]) : encoded, keyJson: JSON.stringify(key), valueJson: JSON.stringify(value), num: typeof value === 'number' ? value : null };
}

/** Rows of one document from each map function's outcome; a failed map adds none. */
function rowsOf(outcomes: readonly FunctionOutcome[], db: string, group: ViewGroup, docId: string, log: Logger): EncodedRow[] {
  const rows: EncodedRow[] = [];
  const partition = group.partitioned ? partitionOf(docId) : undefined;
  // Every normal id of a partitioned database has a partition (the write pipeline checks it).
  if (group.partitioned && partition === undefined) return rows;
  const prefix = partition === undefined ? undefined : partitionKeyPrefix(partition);
  outcomes.forEach((outcome, view) => {
    // A map that runs past `os_process_timeout` on its own fails the update, as CouchDB's updater
    // fails on its query server's `{os_process_error, "OS process timed out."}`.
    if (!outcome.ok && outcome.kind === 'timeout') throw osProcessError('OS process timed out.');
    if (!outcome.ok) {
      log.warning(`view ${db}/${group.id}/${group.maps[view]!.view}: map function failed (${outcome.kind}) on document ${JSON.stringify(docId)}: ${JSON.stringify(outcome.error)}`);
      return;
    }
    const pairs = Array.isArray(outcome.value) ? outcome.value : [];
    const encode = keyEncoder(group.maps[view]!.collation);
    const emitted: { row: EncodedRow; value: Json }[] = [];
    for (const pair of pairs) if (Array.isArray(pair)) emitted.push({ row: encodedRow(view, encode(pair[0] ?? null), pair[0] ?? null, pair[1] ?? null, prefix), value: pair[1] ?? null });
    // Rows of one document under one key come in Erlang's order of their values, as CouchDB's
    // updater sorts a document's emits before it stores them (`couch_mrview_updater:insert_results`).
    emitted.sort((a, b) => Buffer.compare(a.row.key, b.row.key) || compareRaw(a.value, b.value));
    for (const { row } of emitted) rows.push(row);
  });
  return rows;
}

async function indexBatch(context: IndexerContext, db: string, group: ViewGroup, changes: readonly ChangeRow[]): Promise<MappedDocument[]> {
  // The design document's `options` (CouchDB's `design_opts`): `include_design` maps design
  // documents too, `local_seq` gives each document its sequence as `_local_seq`.
  const options = group.doc['options'];
  const includeDesign = isObject(options) && options['include_design'] === true;
  const localSeq = isObject(options) && options['local_seq'] === true;
  const mapped = changes.filter((change) => !change.deleted && change.body !== undefined && (includeDesign || !change.id.startsWith('_design/')));
  // As CouchDB's: `_conflicts` when the document has any; stubs without `encoding`/`encoded_length`.
  const docs: JsonObject[] = mapped.map((change) => {
    const doc: JsonObject = { _id: change.id, _rev: change.changes[0]!, ...change.body };
    if (localSeq) doc['_local_seq'] = change.seq;
    if (change.conflicts !== undefined && change.conflicts.length > 0) doc['_conflicts'] = change.conflicts;
    return withoutEncodingInfo(doc);
  });
  const perMap = await Promise.all(group.maps.map((map) => inHalves(docs, (part) => context.functions.map(group.doc, ['views', map.view, 'map'], part))));
  const rowsById = new Map<string, EncodedRow[]>();
  mapped.forEach((change, i) => rowsById.set(change.id, rowsOf(perMap.map((outcomes) => outcomes[i]!), db, group, change.id, context.log)));
  return changes.map((change) => ({ id: change.id, rows: rowsById.get(change.id) ?? [] }));
}

/** Updates the index of `group` to the database's current sequence; answers the sequence reached. */
export async function updateIndex(context: IndexerContext, db: string, group: ViewGroup): Promise<number> {
  const { storage } = context;
  // An index already at the database's sequence answers without the updater lock, so concurrent
  // queries of a fresh index never queue behind one another (the lock is taken only to update).
  const reached = await storage.views.open(db, group.signature);
  if (reached >= ((await storage.databaseInfo(db))?.updateSeq ?? 0)) return reached;
  return storage.views.exclusive(db, group.signature, async () => {
    const seq = await storage.views.open(db, group.signature);
    const info = await storage.databaseInfo(db);
    const target = info?.updateSeq ?? 0;
    if (seq >= target) return seq;
    if ((info?.purgeSeq ?? 0) > 0) {
      const gone = await purgedAway(storage, db);
      if (gone.length > 0) await storage.views.update(db, group.signature, gone.map((id) => ({ id, rows: [] })), seq);
    }
    const total = target - seq;
    let task: TaskHandle | undefined;
    if (total > TASK_THRESHOLD) {
      task = context.tasks.begin({ type: 'indexer', database: db, design_document: group.id, progress: 0, changes_done: 0, total_changes: total });
    }
    try {
      return await catchUpTo(seq, target, {
        read: (since, limit) => storage.changes(db, { since, limit, includeDocs: true, conflicts: true }),
        index: (changes) => indexBatch(context, db, group, changes),
        store: (indexed, reached) => storage.views.update(db, group.signature, indexed, reached),
        reached: (reached) => storage.views.update(db, group.signature, [], reached),
        progress: (done) => task?.update({ changes_done: done, progress: Math.min(100, Math.floor((done * 100) / total)) }),
      });
    } finally {
      task?.finish();
    }
  });
}
