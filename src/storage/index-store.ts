/**
 * Index rows kept by storage for Mango json indexes: one row per document and index, an opaque key
 * (bytes whose byte order is the order the caller wants: see `src/mango/index-keys.ts`) and the
 * document id. Storage never decodes a key; it orders rows by (key, id) with byte comparison, which
 * both SQLite (BLOB) and PostgreSQL (bytea) index natively, so a query reads only the rows of its range.
 *
 * An index is named by its signature (a hash of its definition) and remembers the update sequence it
 * has caught up to. Catching up is `applyUpdates` from one sequence to a later one, accepted only when
 * the index is still at the first: several nodes (or requests) may try at once, one wins, the others
 * see `false` and read the new state, so a shared index is never written twice or rolled back.
 */
import type { JsonObject } from '../json/json.js';

/** What a document now contributes to an index: its key, or nothing (deleted, or not indexed). */
export interface IndexUpdate {
  id: string;
  key: Uint8Array | undefined;
}

/** A position in an index, for resuming a scan (bookmarks, batches). */
export interface IndexPosition {
  key: Uint8Array;
  id: string;
}

export interface IndexScan {
  /** Keys at or above this (in scan order: ascending). */
  gte?: Uint8Array;
  /** Keys strictly below this. */
  lt?: Uint8Array;
  /** Continue strictly after this row, in scan direction. */
  after?: IndexPosition;
  descending: boolean;
  limit: number;
}

/** An index row joined with the document's current winning revision (live documents only). */
export interface IndexedDocument {
  id: string;
  key: Uint8Array;
  rev: string;
  seq: number;
  body: JsonObject;
}

export interface IndexStore {
  /** The update sequence the index has caught up to; 0 when it was never built. Rejects (404) for a missing database. */
  indexedSeq(db: string, signature: string): Promise<number>;
  /**
   * Atomically replaces the rows of the updated ids and moves the index from `fromSeq` to `toSeq`;
   * false (and nothing written) when the index is no longer at `fromSeq`.
   */
  applyUpdates(db: string, signature: string, fromSeq: number, toSeq: number, updates: readonly IndexUpdate[]): Promise<boolean>;
  /** Rows in (key, id) order (reversed with `descending`) within the bounds, at most `limit`. */
  scan(db: string, signature: string, scan: IndexScan): Promise<IndexedDocument[]>;
  /** Forgets an index: its rows and its sequence. */
  drop(db: string, signature: string): Promise<void>;
}

/** SQL comparison operators of a scan in its direction. */
export function scanOperators(descending: boolean): { after: string; order: string } {
  return descending ? { after: '<', order: 'DESC' } : { after: '>', order: 'ASC' };
}

/** A scan row as both backends read it: the index row joined with the winner and its body. */
export interface IndexScanRow {
  id: string;
  key: Buffer;
  winner: string;
  seq: number;
  body: string | null;
}

export function indexedDocument(row: IndexScanRow): IndexedDocument {
  return { id: row.id, key: new Uint8Array(row.key), rev: row.winner, seq: row.seq, body: row.body === null ? {} : (JSON.parse(row.body) as JsonObject) };
}
