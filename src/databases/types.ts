/**
 * The shapes the database layer hands to HTTP routes. Routes import them from here, never from
 * storage/, so the storage interface can change behind the database layer.
 */
export type {
  ChangeRow,
  ChangesOptions,
  DatabaseInfo,
  DatabaseLimit,
  DocumentSummary,
  LocalDocument,
  OpenedRevision,
  RangeOptions,
  RevisionQuery,
  RevisionTree,
  SecurityObject,
  StoredRevision,
} from '../storage/storage.js';
export type { Caller, ReadFilter } from '../documents/database-hooks.js';
