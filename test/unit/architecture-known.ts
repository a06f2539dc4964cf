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
];

/** Folder imports that point up the layer table without closing a cycle. */
export const KNOWN_UPWARD_IMPORTS_TO_REMOVE: readonly string[] = [
];

/**
 * Exported names that no other file imports (`path: name`), in folders other slices are
 * restructuring (storage, cluster, metrics, js, http/changes, views, mango, the write pipeline,
 * app.ts): each is to lose its `export`, or be deleted if nothing uses it, by that slice.
 */
export const KNOWN_UNUSED_EXPORTS_TO_REMOVE: readonly string[] = [
];
