/** SQL helpers both backends' view stores share: range conditions, aggregates, the answer cache. */
import type { Json } from '../../json/json.js';
import type { ViewAggregate, ViewRange } from '../view-store.js';

/** One end of a range: a key, with a document id or not, inclusive or not. */
export interface RangeBound {
  key: Buffer;
  docId?: string;
  inclusive: boolean;
}

/** The range's lower and upper bounds in key order (a descending range starts at its upper one). */
export function boundsOf(range: ViewRange): { lower?: RangeBound; upper?: RangeBound } {
  const start = range.startKey === undefined ? undefined : { key: range.startKey, docId: range.startDocId, inclusive: true };
  const end = range.endKey === undefined ? undefined : { key: range.endKey, docId: range.endDocId, inclusive: range.inclusiveEnd };
  return range.descending ? { lower: end, upper: start } : { lower: start, upper: end };
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
  // Positions narrow the range in key order, whatever its direction.
  if (range.from !== undefined) conditions.push(`(key, doc_id, n) >= (${param(range.from.key)}, ${param(range.from.docId)}, ${param(range.from.n)})`);
  if (range.to !== undefined) conditions.push(`(key, doc_id, n) < (${param(range.to.key)}, ${param(range.to.docId)}, ${param(range.to.n)})`);
  return conditions.join(' AND ');
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
