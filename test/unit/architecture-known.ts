/**
 * The known exceptions to the folder rules of docs/architecture.md, each to be removed by the work
 * that fixes it. The checks of architecture-folders.test.ts fail on a new exception and on an entry
 * that is no longer needed, so each list only shrinks.
 */

/**
 * Folder imports that close a folder cycle, written as the checks print them (`from -> to`). The
 * cycles are checked with these edges left out; the lead empties this list once the slices that
 * remove them are merged.
 */
export const KNOWN_FOLDER_CYCLES_TO_REMOVE: readonly { edge: string; cycle: string }[] = [
  // The storage contract slice: metrics/gathered-metrics.ts gathers through cluster/gather.ts.
  { edge: 'src/metrics -> src/cluster', cycle: 'src/cluster -> src/users -> src/metrics -> src/cluster, and src/cluster -> src/storage/postgres -> src/storage -> src/metrics -> src/cluster' },
  // LoopTurns lives in http/event-loop.ts, used by the database layer and views below HTTP: it belongs in a leaf.
  { edge: 'src/databases -> src/http', cycle: 'src/databases -> src/http -> src/databases (http/services.ts names the database layer)' },
  { edge: 'src/views -> src/http', cycle: 'src/views -> src/http -> src/views (http/services.ts names the views)' },
];

/** Folder imports that point up the layer table without closing a cycle. */
export const KNOWN_UPWARD_IMPORTS_TO_REMOVE: readonly string[] = [
  // mango/cursor.ts takes LoopTurns from http/event-loop.ts (see above).
  'src/mango -> src/http',
  // The SQLite backend takes the named locks of the cluster (the storage contract slice gives them a home below storage).
  'src/storage/sqlite -> src/cluster',
];

/**
 * Exported names that no other file imports (`path: name`), in folders other slices are
 * restructuring (storage, cluster, metrics, js, http/changes, views, mango, the write pipeline,
 * app.ts): each is to lose its `export`, or be deleted if nothing uses it, by that slice.
 */
export const KNOWN_UNUSED_EXPORTS_TO_REMOVE: readonly string[] = [
  'src/app.ts: DEFAULT_INI',
  'src/cluster/cluster-link.ts: MessageHandlers',
  'src/cluster/gather-hub.ts: GatherHubOptions',
  'src/cluster/pg-bus.ts: MAX_PAYLOAD_BYTES',
  'src/cluster/pg-bus.ts: PostgresBus',
  'src/cluster/pg-bus.ts: PostgresBusOptions',
  'src/cluster/supervisor.ts: SupervisorOptions',
  'src/databases/document-writes.ts: WriteOptions',
  'src/databases/write-pipeline.ts: BatchItem',
  'src/databases/write-pipeline.ts: BatchOptions',
  'src/http/changes/feed-args.ts: Filter',
  'src/http/changes/feed-args.ts: NamedFilter',
  'src/http/changes/feed-args.ts: changesTimeoutMs',
  'src/http/changes/feed-args.ts: credentialExpiry',
  'src/js/design-check.ts: NamedFunction',
  'src/js/design-docs.ts: readDesignDocs',
  'src/js/design-info.ts: viewSignature',
  'src/js/sandbox.ts: FailureKind',
  'src/js/sandbox.ts: HeldMemory',
  'src/js/validation-hooks.ts: ValidationDeps',
  'src/js/validation-hooks.ts: refusalOf',
  'src/js/worker-pool.ts: PoolOptions',
  'src/mango/cursor.ts: ScanBudget',
  'src/mango/find-request.ts: DEFAULT_LIMIT',
  'src/mango/index-keys.ts: TOP',
  'src/mango/index-updater.ts: INDEX_BATCH',
  'src/mango/planner.ts: Candidate',
  'src/mango/planner.ts: KeyRange',
  'src/mango/planner.ts: keyRange',
  'src/mango/selector-analysis.ts: Bound',
  'src/metrics/metrics.ts: SandboxMemory',
  'src/storage/attachment-store.ts: CHUNKS_PER_WRITE',
  'src/storage/attachment-store.ts: chunkSpan',
  'src/storage/attachment-store.ts: digestOf',
  'src/storage/local-revisions.ts: LocalWriteDecision',
  'src/storage/postgres/postgres-connection.ts: PoolSettings',
  'src/storage/postgres/postgres-schema.ts: MIGRATION_LOCK_CLASS',
  'src/storage/postgres/postgres-schema.ts: Migration',
  'src/storage/postgres/postgres-storage.ts: PostgresStorageOptions',
  'src/storage/postgres/postgres-views.ts: VIEW_LOCK_CLASS',
  'src/storage/postgres/postgres-write-queue.ts: BatchExecutor',
  'src/storage/purge-plan.ts: DocumentPurge',
  'src/storage/revision-text.ts: ParsedRevision',
  'src/storage/revision-tree.ts: Conflicts',
  'src/storage/revision-tree.ts: RevisionDescription',
  'src/storage/revision-tree.ts: RevisionNode',
  'src/storage/revision-tree.ts: RevisionSelection',
  'src/storage/revision-tree.ts: RevisionsDiff',
  'src/storage/sqlite/sqlite-attachments.ts: AttachmentStatements',
  'src/storage/sqlite/sqlite-chunk-file.ts: CHUNK_PAGE_SIZE',
  'src/storage/sqlite/sqlite-statements.ts: DocumentRow',
  'src/storage/sqlite/sqlite-statements.ts: LocalRow',
  'src/storage/storage.ts: AttachmentStore',
  'src/storage/storage.ts: IndexScan',
  'src/storage/storage.ts: IndexStore',
  'src/storage/storage.ts: IndexedDocument',
  'src/storage/stored-rows.ts: ChangeRecord',
  'src/storage/tree-editor.ts: EditOutcome',
  'src/storage/tree-editor.ts: TreeUpdate',
  'src/storage/tree-editor.ts: UNLIMITED',
  'src/storage/view-store.ts: numericValue',
  'src/storage/write-slices.ts: SLICE_EDITS',
  'src/storage/write-slices.ts: SLICE_REVISIONS',
  'src/views/builtin-reduces.ts: BUILTIN_REDUCES',
  'src/views/builtin-reduces.ts: builtinSum',
  'src/views/indexer.ts: IndexerContext',
  'src/views/view-group.ts: ViewDefinition',
  'src/views/view-keys.ts: KEY_MAX',
  'src/views/view-keys.ts: KEY_MIN',
  'src/views/view-query.ts: DocumentReader',
  'src/views/view-ranges.ts: GroupLevel',
  'src/views/view-reduce.ts: REDUCE_CHUNK',
  'src/views/view-reduce.ts: Reducer',
  'src/views/views.ts: ViewsSettings',
];
