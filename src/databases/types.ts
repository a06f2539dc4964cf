/**
 * The shapes the database layer hands to HTTP routes. Routes import them from here, never from
 * storage/, so the storage interface can change behind the database layer.
 */
export type {
  ChangeRow,
  DatabaseInfo,
  DatabaseLimit,
  DocumentSummary,
  OpenedRevision,
  RangeOptions,
} from '../storage/storage.js';
export type { ReadFilter } from '../documents/database-hooks.js';
