/**
 * A search request answered from SQL (search-sql.ts), the same on both backends: the page of hits,
 * their stored values, the total, counts and ranges facets. `run` executes one statement with `?`
 * placeholders and answers its rows.
 */
import type { SearchAnswer, SearchHitRow, SearchRequest } from '../search-store.js';
import { countsSql, orderOf, pageSql, rangeSql, storedSql, totalSql, type Param, type SearchDialect } from './search-sql.js';

type Run = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

/** A statement and its parameters, built by `build` with a fresh parameter list. */
async function query(run: Run, build: (param: Param) => string): Promise<Record<string, unknown>[]> {
  const params: unknown[] = [];
  const sql = build((value) => (params.push(value), '?'));
  return run(sql, params);
}

async function storedFields(dialect: SearchDialect, run: Run, ids: readonly string[]): Promise<Map<string, SearchHitRow['fields']>> {
  const byId = new Map<string, SearchHitRow['fields']>();
  if (ids.length === 0) return byId;
  for (const row of await query(run, (param) => storedSql(dialect, ids, param))) {
    const id = String(row['doc_id']);
    const value = row['type'] === 'double' || (row['str'] === null && row['num'] !== null) ? Number(row['num']) : String(row['str']);
    let fields = byId.get(id);
    if (fields === undefined) byId.set(id, (fields = []));
    fields.push({ name: String(row['field']), value });
  }
  return byId;
}

async function facets(dialect: SearchDialect, run: Run, request: SearchRequest): Promise<Pick<SearchAnswer, 'counts' | 'ranges'>> {
  const answer: Pick<SearchAnswer, 'counts' | 'ranges'> = {};
  if (request.counts !== undefined) {
    answer.counts = {};
    for (const field of request.counts) {
      const rows = await query(run, (param) => countsSql(dialect, request.plan, field, request.topN, param));
      answer.counts[field] = Object.fromEntries(rows.map((row) => [String(row['label']), Number(row['c'])]));
    }
  }
  if (request.ranges !== undefined) {
    answer.ranges = {};
    for (const [field, ranges] of Object.entries(request.ranges)) {
      const counted: [string, number][] = [];
      for (const range of ranges) {
        const bounds = { lower: range.min, upper: range.max, includeLower: range.minInclusive, includeUpper: range.maxInclusive };
        const [row] = await query(run, (param) => rangeSql(dialect, request.plan, field, bounds, param));
        counted.push([range.label, Number(row?.['c'] ?? 0)]);
      }
      // As Lucene's facets: the top_n labels with the most hits, labels without any left out.
      counted.sort((a, b) => b[1] - a[1]);
      answer.ranges[field] = Object.fromEntries(counted.filter(([, count]) => count > 0).slice(0, request.topN));
    }
  }
  return answer;
}

export async function searchAnswer(dialect: SearchDialect, request: SearchRequest, run: Run): Promise<SearchAnswer> {
  const page = await query(run, (param) => pageSql(dialect, request, param));
  // An empty page (past the last hit) carries no count: only then is the plan counted on its own.
  const total = page.length > 0 ? Number(page[0]!['total_hits']) : Number((await query(run, (param) => totalSql(dialect, request.plan, param)))[0]?.['c'] ?? 0);
  const stored = await storedFields(dialect, run, page.map((row) => String(row['doc_id'])));
  const hits = page.map((row) => ({ id: String(row['doc_id']), ...orderOf(request.sort, row), fields: stored.get(String(row['doc_id'])) ?? [] }));
  return { totalHits: total, hits, ...(await facets(dialect, run, request)) };
}
