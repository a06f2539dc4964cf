/**
 * What the storage backends keep of map/reduce views: one index per design-document signature and
 * database (a catalog row and a table of its own), holding every view's rows ordered by the encoded
 * key (src/collation/encode.ts: bytes compare as CouchDB collates keys), then the document id (byte
 * order, as CouchDB), then the emission order. Keys come encoded by the caller: storage never needs
 * to know the collation.
 */
import type { Json } from '../json/json.js';

/** A group level of a reduce query: 0 (everything), an array-prefix length, or every exact key. */
export type ReduceLevel = number | 'exact';

/** One emitted row, ready to store. */
export interface EncodedRow {
  view: number;
  /** The encoded key. */
  key: Buffer;
  /** The key and value as JSON text. */
  keyJson: string;
  valueJson: string;
  /** The value when it is a number (for the native `_sum`/`_stats` in SQL), else null. */
  num: number | null;
}

/** The rows a document now emits; none for a deleted document or one that emits nothing. */
export interface MappedDocument {
  id: string;
  rows: EncodedRow[];
}

/** A range of one view; with `descending` the start is the upper bound, as in CouchDB. */
export interface ViewRange {
  view: number;
  startKey?: Buffer;
  startDocId?: string;
  endKey?: Buffer;
  endDocId?: string;
  inclusiveEnd: boolean;
  descending: boolean;
  limit?: number;
  skip: number;
  /** Narrows the range to rows at or after this position (key, document id, emission number), in key order. */
  from?: RowPosition;
  /** Narrows the range to rows before this position, in key order. */
  to?: RowPosition;
  /** False when the caller needs no `offset` (a page after the first, a reduce): saves its count. */
  countOffset?: boolean;
}

/** Where a row sorts in a view: its encoded key, document id and emission number. */
export interface RowPosition {
  key: Buffer;
  docId: string;
  n: number;
}

/**
 * A piece of a range in key order, as a JavaScript reduce reads it: a block of rows whose reduction
 * is stored (its key JSON and encoded key, those of the block's first position), or rows to reduce.
 */
export type ReductionPiece =
  | { kind: 'stored'; keyJson: string; key: Buffer; valueJson: string; inputSize: number }
  | { kind: 'rows'; from?: RowPosition; to?: RowPosition };

/** A block of rows whose stored reduction is missing or out of date, with its rows in key order. */
export interface StaleBlock {
  at: RowPosition;
  version: number;
  rows: { key: Json; id: string; value: Json }[];
}

/** A block's reduction to store: `inputSize` is couchjs's input length of the call, for `reduce_limit`. */
export interface BlockReduction {
  at: RowPosition;
  version: number;
  valueJson: string;
  inputSize: number;
}

/** A reduce query's answer over a whole view, kept until the view's rows next change. */
export interface KeptAnswer {
  valueJson: string;
}

export interface ViewRow {
  key: Json;
  id: string;
  value: Json;
  /** The encoded key, for grouping. */
  encoded: Buffer;
}

export interface ViewRowsResult {
  /** Rows of the whole view. */
  totalRows: number;
  /** Rows of the view before the first one returned (in the query's direction). */
  offset: number;
  rows: ViewRow[];
}

/** SQL aggregates over a range (or one key of it): rows, and over the rows whose value is a number. */
export interface ViewAggregate {
  /** The group's key (grouped aggregates; the first key's JSON where ICU-equal keys differ). */
  key?: Json;
  count: number;
  numbers: number;
  sum: number;
  min: number | null;
  max: number | null;
  sumsqr: number;
  /** Distinct keys of the group (stored reductions only). */
  distinct?: number;
}

export interface ViewIndexInfo {
  signature: string;
  updateSeq: number;
  rows: number;
}

/**
 * What an index takes, as CouchDB's `_info` `sizes`: `file` the bytes its tables and their indexes
 * occupy, `active` the bytes of the data they hold (at most `file`: pages also hold free space),
 * `external` the JSON text of its rows' keys and values.
 */
export interface ViewIndexSizes {
  file: number;
  active: number;
  external: number;
}

export interface ViewStore {
  /** Creates the index when missing; answers the update sequence it has reached. */
  open(db: string, signature: string): Promise<number>;
  /** Replaces the rows of the given documents and records `updateSeq`, in one transaction. */
  update(db: string, signature: string, documents: readonly MappedDocument[], updateSeq: number): Promise<void>;
  rows(db: string, signature: string, range: ViewRange): Promise<ViewRowsResult>;
  /**
   * Aggregates of the range: one, or with `grouped` one per distinct encoded key in the range's
   * order, `skip` and `limit` counting groups.
   */
  aggregate(db: string, signature: string, range: ViewRange, grouped?: boolean): Promise<ViewAggregate[]>;
  /**
   * The groups of the range at a group level (0, an array-prefix length, or `exact`) from the stored
   * partial reductions, `skip` and `limit` counting groups; undefined for a level that is not stored.
   */
  reduce(db: string, signature: string, range: ViewRange, level: ReduceLevel): Promise<ViewAggregate[] | undefined>;
  /**
   * The range (ascending, whatever its direction) as blocks whose reduction by `reducer` is stored
   * and lies within one group of `level`, and the rows between them.
   */
  reductionPlan(db: string, signature: string, range: ViewRange, level: ReduceLevel, reducer: string): Promise<ReductionPiece[]>;
  /** Up to `most` blocks of a view (starting after `after`) whose reduction by `reducer` is missing or out of date. */
  staleBlocks(db: string, signature: string, view: number, reducer: string, most: number, after?: RowPosition): Promise<StaleBlock[]>;
  /** Stores blocks' reductions; one whose block changed since (another version) is left out. */
  storeReductions(db: string, signature: string, view: number, reducer: string, reductions: readonly BlockReduction[]): Promise<void>;
  /** The answer kept under `name` (any name the caller chooses) for the view, undefined when its rows changed since. */
  keptAnswer(db: string, signature: string, view: number, name: string): Promise<KeptAnswer | undefined>;
  /** Keeps an answer computed from the view's rows; the caller holds `exclusive`, so that no update runs between reading them and this. */
  keepAnswer(db: string, signature: string, view: number, name: string, answer: KeptAnswer): Promise<void>;
  /** The sizes of an index; undefined when it was never built. */
  sizes(db: string, signature: string): Promise<ViewIndexSizes | undefined>;
  /** Every index of the database. */
  list(db: string): Promise<ViewIndexInfo[]>;
  /** Drops the given indexes (their tables); answers how many existed. */
  drop(db: string, signatures: readonly string[]): Promise<number>;
  /**
   * Runs `work` as the only updater of the index: on PostgreSQL across every node (an advisory lock),
   * on SQLite across the worker processes sharing the file (the server's named locks).
   */
  exclusive<T>(db: string, signature: string, work: () => Promise<T>): Promise<T>;
}
