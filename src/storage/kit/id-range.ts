/** The key range of `_all_docs`, `_changes` and the per-principal orders as SQL, for both backends. */
import type { RangeOptions } from '../storage.js';

/**
 * Conditions (each ` AND …`) on `<alias>.id` for a key range; descending swaps which key is the
 * upper bound. `param` places a value and answers its placeholder, in the backend's syntax.
 */
export function idRangeConditions(alias: string, options: RangeOptions, param: (value: string) => string): string {
  const descending = options.descending === true;
  const inclusiveEnd = options.inclusiveEnd !== false;
  let sql = '';
  if (options.startKey !== undefined) sql += ` AND ${alias}.id ${descending ? '<=' : '>='} ${param(options.startKey)}`;
  if (options.endKey !== undefined) {
    const op = descending ? (inclusiveEnd ? '>=' : '>') : inclusiveEnd ? '<=' : '<';
    sql += ` AND ${alias}.id ${op} ${param(options.endKey)}`;
  }
  return sql;
}
