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

/**
 * SQL conditions of a range over columns `key` and `doc_id`; `param` numbers the placeholders.
 * Without a document id a bound takes every row of its key.
 */
export function rangeConditions(range: ViewRange, param: (value: unknown) => string): string {
  const conditions = ['view = ' + param(range.view)];
  const bound = (key: Buffer, docId: string | undefined, op: string): void => {
    if (docId === undefined) conditions.push(`key ${op} ${param(key)}`);
    else conditions.push(`(key, doc_id) ${op} (${param(key)}, ${param(docId)})`);
  };
  const d = range.descending;
  if (range.startKey !== undefined) bound(range.startKey, range.startDocId, d ? '<=' : '>=');
  if (range.endKey !== undefined) bound(range.endKey, range.endDocId, (d ? '>' : '<') + (range.inclusiveEnd ? '=' : ''));
  return conditions.join(' AND ');
}

/** Conditions selecting the rows before the range's start (for `offset`). */
export function beforeStart(range: ViewRange, param: (value: unknown) => string): string {
  if (range.startKey === undefined) return '1 = 0';
  const op = range.descending ? '>' : '<';
  const conditions = ['view = ' + param(range.view)];
  if (range.startDocId === undefined) conditions.push(`key ${op} ${param(range.startKey)}`);
  else conditions.push(`(key, doc_id) ${op} (${param(range.startKey)}, ${param(range.startDocId)})`);
  return conditions.join(' AND ');
}

/** The value column of a stored row as a number for the SQL aggregates. */
export function numericValue(value: Json): number | null {
  return typeof value === 'number' ? value : null;
}

/** The SELECT list of the aggregates (`total`, `sum` per dialect), grouped by key or not. */
export function aggregateColumns(grouped: boolean, sum: (expression: string) => string): string {
  const columns = `count(*) AS count, count(num) AS numbers, ${sum('num')} AS sum, min(num) AS min, max(num) AS max, ${sum('num * num')} AS sumsqr`;
  return grouped ? `min(key_json) AS key_json, ${columns}` : columns;
}

/** A row of the aggregate query as numbers (PostgreSQL answers bigint and numeric as strings). */
export function aggregateOf(row: Record<string, unknown>): ViewAggregate {
  const number = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
  const result: ViewAggregate = { count: Number(row['count']), numbers: Number(row['numbers']), sum: Number(row['sum'] ?? 0), min: number(row['min']), max: number(row['max']), sumsqr: Number(row['sumsqr'] ?? 0) };
  if (typeof row['key_json'] === 'string') result.key = JSON.parse(row['key_json']) as Json;
  return result;
}

/**
 * Answers of counting and aggregate queries by index table, update sequence, SQL and parameters: an
 * index that has not changed gives the same answer, so a repeated reduce or `offset` costs no scan.
 * Bounded (oldest first out).
 */
export class AnswerCache<T> {
  readonly #answers = new Map<string, T>();

  async get(table: string, seq: number, sql: string, params: readonly unknown[], compute: () => Promise<T> | T): Promise<T> {
    const key = `${table}\u0000${seq}\u0000${sql}\u0000${params.map((param) => (Buffer.isBuffer(param) ? param.toString('hex') : String(param))).join('\u0000')}`;
    const known = this.#answers.get(key);
    if (known !== undefined) return known;
    const answer = await compute();
    if (this.#answers.size >= 1000) this.#answers.delete(this.#answers.keys().next().value!);
    this.#answers.set(key, answer);
    return answer;
  }
}
