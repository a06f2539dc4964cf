/**
 * The SQL of full-text search shared by both backends (search-store.ts): a `SearchPlan` as a
 * SELECT of `(doc_id, score)` with one row per matching document, and the queries over it (the page
 * of hits in sort order after a bookmark, the total, counts and ranges facets). Placeholders are
 * `?` (PostgreSQL numbers them); only the text leaves differ (`SearchDialect.text`).
 *
 * Tables of an index: `docs` (one row per indexed document) and `fieldValues` (one row per string,
 * double or stored value: `doc_id, n, field, type, str, num, stored`).
 */
import type { SearchPlan, SearchRequest, SearchSortKey, Bounds } from '../search-store.js';

export type Param = (value: unknown) => string;

export interface SearchDialect {
  readonly docs: string;
  readonly fieldValues: string;
  /** SELECT doc_id, score of a text leaf (distinct doc ids). */
  text(leaf: Extract<SearchPlan, { kind: 'text' }>, param: Param): string;
  /** A condition on the column `str` for a Lucene wildcard pattern (`*`, `?`). */
  wildcard(pattern: string, param: Param): string;
}

/** A score as both engines compute and compare it. */
const DOUBLE = 'DOUBLE PRECISION';
/** Sort values standing in for a missing field, so that such documents come last in either direction. */
const HIGHEST = { double: Number.MAX_VALUE, string: '\u{10FFFF}' };
const LOWEST = { double: -Number.MAX_VALUE, string: '' };

function bounds<T>(column: string, range: Bounds<T>, param: Param): string {
  const conditions: string[] = [];
  if (range.lower !== undefined) conditions.push(`${column} ${range.includeLower ? '>=' : '>'} ${param(range.lower)}`);
  if (range.upper !== undefined) conditions.push(`${column} ${range.includeUpper ? '<=' : '<'} ${param(range.upper)}`);
  return conditions.length === 0 ? '' : ` AND ${conditions.join(' AND ')}`;
}

function valueLeaf(dialect: SearchDialect, plan: Extract<SearchPlan, { kind: 'string' | 'double' }>, param: Param): string {
  // The field's placeholder first: placeholders are numbered in the order they appear.
  const start = `SELECT doc_id, CAST(1 AS ${DOUBLE}) AS score FROM ${dialect.fieldValues} WHERE field = ${param(plan.field)} AND`;
  let condition: string;
  if (plan.kind === 'double') condition = `type = 'double'${bounds('num', plan.range, param)}`;
  else if (plan.equals !== undefined) condition = `type = 'string' AND str = ${param(plan.equals)}`;
  else if (plan.pattern !== undefined) condition = `type = 'string' AND ${dialect.wildcard(plan.pattern, param)}`;
  else condition = `type = 'string'${bounds('str', plan.range ?? { includeLower: true, includeUpper: true }, param)}`;
  return `${start} ${condition} GROUP BY doc_id`;
}

/** SELECT doc_id, score: the documents `plan` matches, each once. */
function planSql(dialect: SearchDialect, plan: SearchPlan, param: Param): string {
  switch (plan.kind) {
    case 'all':
      return `SELECT doc_id, CAST(1 AS ${DOUBLE}) AS score FROM ${dialect.docs}`;
    case 'none':
      return `SELECT doc_id, CAST(0 AS ${DOUBLE}) AS score FROM ${dialect.docs} WHERE 1 = 0`;
    case 'ids':
      return `SELECT doc_id, CAST(1 AS ${DOUBLE}) AS score FROM ${dialect.docs} WHERE doc_id >= ${param(plan.gte)} AND doc_id < ${param(plan.lt)}`;
    case 'text':
      return dialect.text(plan, param);
    case 'string':
    case 'double':
      return valueLeaf(dialect, plan, param);
    case 'and':
    case 'or': {
      const parts = plan.parts.map((part, i) => `SELECT doc_id, score FROM (${planSql(dialect, part, param)}) AS p${i}`);
      const having = plan.kind === 'and' ? ` HAVING count(*) = ${plan.parts.length}` : '';
      return `SELECT doc_id, sum(score) AS score FROM (${parts.join(' UNION ALL ')}) AS u GROUP BY doc_id${having}`;
    }
    case 'not':
      return `SELECT doc_id, score FROM (${planSql(dialect, plan.positive, param)}) AS pos WHERE doc_id NOT IN (SELECT doc_id FROM (${planSql(dialect, plan.negative, param)}) AS neg)`;
  }
}

/** The expression of one sort key over a hit `h`, missing values replaced so they sort last. */
function sortExpression(dialect: SearchDialect, key: SearchSortKey, param: Param): string {
  if (key.by === 'score') return 'h.score';
  if (key.by === 'id') return 'h.doc_id';
  const column = key.by === 'double' ? 'num' : 'str';
  const missing = (key.descending ? LOWEST : HIGHEST)[key.by];
  return `coalesce((SELECT min(${column}) FROM ${dialect.fieldValues} v WHERE v.doc_id = h.doc_id AND v.field = ${param(key.field)} AND v.type = '${key.by}'), ${param(missing)})`;
}

/** Rows strictly after `after` in the order of `sort`: (k1 > a1) OR (k1 = a1 AND k2 > a2) OR … */
function afterCondition(sort: readonly SearchSortKey[], after: readonly (string | number)[], param: Param): string {
  const alternatives: string[] = [];
  for (let i = 0; i < sort.length; i++) {
    const equal = sort.slice(0, i).map((_, j) => `k${j} = ${param(after[j])}`);
    equal.push(`k${i} ${sort[i]!.descending ? '<' : '>'} ${param(after[i])}`);
    alternatives.push(`(${equal.join(' AND ')})`);
  }
  return alternatives.join(' OR ');
}

/**
 * The page of hits: `doc_id`, `score`, the sort values `k0…` and `total_hits` (every hit, counted
 * before the bookmark's condition: one evaluation of the plan answers both).
 */
export function pageSql(dialect: SearchDialect, request: SearchRequest, param: Param): string {
  // Placeholders are numbered in the order they appear: the sort keys come before the plan.
  const keys = request.sort.map((key, i) => `${sortExpression(dialect, key, param)} AS k${i}`).join(', ');
  const hits = planSql(dialect, request.plan, param);
  const where = request.after === undefined ? '' : ` WHERE ${afterCondition(request.sort, request.after, param)}`;
  const order = request.sort.map((key, i) => `k${i} ${key.descending ? 'DESC' : 'ASC'}`).join(', ');
  return `SELECT * FROM (SELECT h.doc_id, h.score, ${keys}, count(*) OVER () AS total_hits FROM (${hits}) AS h) AS s${where} ORDER BY ${order} LIMIT ${param(request.limit)}`;
}

export function totalSql(dialect: SearchDialect, plan: SearchPlan, param: Param): string {
  return `SELECT count(*) AS c FROM (${planSql(dialect, plan, param)}) AS h`;
}

/** Hits per distinct value of a string field, most first, at most `topN`. */
export function countsSql(dialect: SearchDialect, plan: SearchPlan, field: string, topN: number, param: Param): string {
  return (
    `SELECT v.str AS label, count(DISTINCT v.doc_id) AS c FROM ${dialect.fieldValues} v JOIN (${planSql(dialect, plan, param)}) AS h ON h.doc_id = v.doc_id` +
    ` WHERE v.field = ${param(field)} AND v.type = 'string' GROUP BY v.str ORDER BY c DESC, label ASC LIMIT ${param(topN)}`
  );
}

/** Hits with a value of a double field within the range. */
export function rangeSql(dialect: SearchDialect, plan: SearchPlan, field: string, range: Bounds<number>, param: Param): string {
  return (
    `SELECT count(DISTINCT v.doc_id) AS c FROM ${dialect.fieldValues} v JOIN (${planSql(dialect, plan, param)}) AS h ON h.doc_id = v.doc_id` +
    ` WHERE v.field = ${param(field)} AND v.type = 'double'${bounds('v.num', range, param)}`
  );
}

/** The stored values of the given documents, in indexing order. */
export function storedSql(dialect: SearchDialect, ids: readonly string[], param: Param): string {
  return `SELECT doc_id, field, type, str, num FROM ${dialect.fieldValues} WHERE stored = 1 AND doc_id IN (${ids.map((id) => param(id)).join(', ')}) ORDER BY doc_id, n`;
}

/** A page row's order values as hits show them (a missing field's stand-in is null) and as a bookmark keeps them. */
export function orderOf(sort: readonly SearchSortKey[], row: Record<string, unknown>): { order: (string | number | null)[]; after: (string | number)[] } {
  const after = sort.map((_, i) => row[`k${i}`] as string | number);
  const order = sort.map((key, i) => {
    const value = key.by === 'score' ? Number(after[i]) : after[i]!;
    if (key.by !== 'double' && key.by !== 'string') return value;
    return value === HIGHEST[key.by] || value === LOWEST[key.by] ? null : key.by === 'double' ? Number(value) : value;
  });
  return { order, after: after.map((value, i) => (sort[i]!.by === 'score' || sort[i]!.by === 'double' ? Number(value) : value)) };
}
