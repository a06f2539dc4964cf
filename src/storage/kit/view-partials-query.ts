/**
 * Reduce queries answered from the stored partials (view-partials.ts): the groups of a range at a
 * group level are the partials between the range's ends, read in key order with the query's skip
 * and limit; only the groups at the two ends can reach outside the range, which two indexed
 * reads of the group's first and last rows tell, and such a cut group is aggregated from its rows inside the range. A
 * whole-view reduce is one partial; a key-range reduce without grouping combines the level-1 groups.
 */
import type { ReduceLevel, ViewAggregate, ViewRange } from '../view-store.js';
import { boundsOf, rangeConditions, type RangeBound as Bound } from './view-sql.js';
import type { IndexTables, Partial, SqlSteps } from './view-partials.js';
import { EXACT, PARTIAL_COLUMNS, PREFIX_LEVELS, groupCondition, groupOf, partialOf, sqlOf } from './view-partials.js';

function aggregateOfPartial(partial: Partial): ViewAggregate {
  return { key: JSON.parse(partial.keyJson), count: partial.rowCount, numbers: partial.numCount, sum: partial.sum, min: partial.min, max: partial.max, sumsqr: partial.sumsqr, distinct: partial.keyCount };
}

/** Orders document ids by code point, as the backends compare their UTF-8 bytes. */
function compareIds(a: string, b: string): number {
  if (a === b) return 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** Whether a row lies beyond a bound: before the lower one (`side` '<') or after the upper one ('>'). */
function isBeyond(key: Buffer, docId: string, bound: Bound, side: '<' | '>'): boolean {
  const order = Buffer.compare(key, bound.key) || (bound.docId === undefined ? 0 : compareIds(docId, bound.docId));
  const sign = side === '<' ? -order : order;
  return sign > 0 || (sign === 0 && !bound.inclusive);
}

/**
 * Whether some row of the group lies outside the range: its first row is before the lower bound or
 * its last row after the upper one (rows are in order), each one indexed read with the group's
 * own two bounds only, which SQLite's planner uses as the index range.
 */
function* isCut(tables: IndexTables, range: ViewRange, partial: Partial): SqlSteps<boolean> {
  const { lower, upper } = boundsOf(range);
  for (const [bound, side] of [[lower, '<'], [upper, '>']] as const) {
    if (bound === undefined) continue;
    const params: unknown[] = [range.view];
    const where = `view = ? AND ${groupCondition(partial, params)}`;
    const order = side === '<' ? 'ASC' : 'DESC';
    const [edge] = yield sqlOf(`SELECT key, doc_id FROM ${tables.rows} WHERE ${where} ORDER BY key ${order}, doc_id ${order} LIMIT 1`, params);
    if (edge !== undefined && isBeyond(edge['key'] as Buffer, String(edge['doc_id']), bound, side)) return true;
  }
  return false;
}

/**
 * The range clipped to a prefix group's rows: on each side the tighter of the range's bound and the
 * group's, alone, since SQLite's planner takes one bound per side as the index range and may pick a
 * looser one left beside a tighter one and scan the group.
 */
function clipped(range: ViewRange, partial: Partial, params: unknown[]): string {
  if (partial.level === EXACT || partial.level === 0) return `${rangeConditions(range, (value) => (params.push(value), '?'))} AND ${groupCondition(partial, params)}`;
  const first = partial.gkey.subarray(0, partial.gkey.length - 1);
  const past = Buffer.concat([first, Buffer.from([0xff])]);
  const { lower, upper } = boundsOf(range);
  const conditions = [(params.push(range.view), 'view = ?')];
  if (lower === undefined || Buffer.compare(lower.key, first) < 0) conditions.push((params.push(first), 'key >= ?'));
  else conditions.push(side(lower, lower.inclusive ? '>=' : '>', params));
  if (upper === undefined || Buffer.compare(upper.key, past) >= 0) conditions.push((params.push(past), 'key < ?'));
  else conditions.push(side(upper, upper.inclusive ? '<=' : '<', params));
  return conditions.join(' AND ');
}

/** `key op ?`, or `(key, doc_id) op (?, ?)` for a bound with a document id. */
function side(bound: Bound, op: string, params: unknown[]): string {
  if (bound.docId === undefined) return (params.push(bound.key), `key ${op} ?`);
  params.push(bound.key, bound.docId);
  return `(key, doc_id) ${op} (?, ?)`;
}

/** A cut group reduced from its rows inside the range. */
function* rowsAggregate(tables: IndexTables, range: ViewRange, partial: Partial): SqlSteps<ViewAggregate> {
  const params: unknown[] = [];
  const where = clipped(range, partial, params);
  const columns = 'count(*) AS c, count(num) AS n, coalesce(sum(num), 0) AS s, min(num) AS lo, max(num) AS hi, coalesce(sum(num * num), 0) AS q, count(DISTINCT key) AS k';
  const [row] = yield sqlOf(`SELECT ${columns} FROM ${tables.rows} WHERE ${where}`, params);
  const number = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
  return { key: JSON.parse(partial.keyJson), count: Number(row!['c']), numbers: Number(row!['n']), sum: Number(row!['s']), min: number(row!['lo']), max: number(row!['hi']), sumsqr: Number(row!['q']), distinct: Number(row!['k']) };
}

/**
 * The partials of one level (with `depth`: the exact keys of that many array members)
 * between the range's ends, in the range's order, at most `wanted`.
 */
function* partialsBetween(tables: IndexTables, range: ViewRange, group: { level: number; depth?: number }, wanted: number | undefined): SqlSteps<Partial[]> {
  const params: unknown[] = [range.view, group.level];
  const conditions = ['view = ?', 'level = ?'];
  // One depth per statement, so the (view, level, depth, gkey) index gives the order.
  if (group.depth !== undefined) conditions.push((params.push(group.depth), 'depth = ?'));
  const { lower, upper } = boundsOf(range);
  if (lower !== undefined) {
    conditions.push('gkey >= ?');
    params.push(group.depth === undefined && group.level !== EXACT ? groupOf(lower.key, group.level).gkey : lower.key);
  }
  if (upper !== undefined) {
    // A group's key is its first row's: a group starting at an excluded upper key has no row in range.
    conditions.push(upper.inclusive || upper.docId !== undefined ? 'gkey <= ?' : 'gkey < ?');
    params.push(upper.key);
  }
  const order = range.descending ? 'DESC' : 'ASC';
  const limit = wanted === undefined ? '' : ` LIMIT ${Math.floor(wanted)}`;
  const hint = group.depth === undefined ? '' : ` ${tables.byDepth ?? ''}`;
  const rows = yield sqlOf(`SELECT ${PARTIAL_COLUMNS} FROM ${tables.partials}${hint} WHERE ${conditions.join(' AND ')} ORDER BY gkey ${order}${limit}`, params);
  return rows.map(partialOf);
}

/** The groups meeting the range at `level`: its prefix groups and the exact keys too short for one, merged in order. */
function* candidates(tables: IndexTables, range: ViewRange, level: number, wanted: number | undefined): SqlSteps<Partial[]> {
  const prefixes = yield* partialsBetween(tables, range, { level }, wanted);
  if (level === EXACT) return prefixes;
  const short: Partial[] = [];
  for (let depth = 0; depth < level; depth++) short.push(...(yield* partialsBetween(tables, range, { level: EXACT, depth }, wanted)));
  if (short.length === 0) return prefixes;
  const sign = range.descending ? -1 : 1;
  const merged = [...prefixes, ...short].sort((a, b) => sign * Buffer.compare(a.gkey, b.gkey));
  return wanted === undefined ? merged : merged.slice(0, wanted);
}

/** The groups of the range at `level` (`skip`/`limit` count groups); undefined past the stored prefix levels. */
export function* reduceGroups(tables: IndexTables, range: ViewRange, level: ReduceLevel): SqlSteps<ViewAggregate[] | undefined> {
  if (level !== 'exact' && level > PREFIX_LEVELS) return undefined;
  if (level === 0) return [yield* wholeRange(tables, range)];
  const numeric = level === 'exact' ? EXACT : level;
  // Only the first and the last candidate can be cut, and a cut one may turn out empty: two spare.
  const wanted = range.limit === undefined ? undefined : range.skip + range.limit + 2;
  const found = yield* candidates(tables, range, numeric, wanted);
  const groups = found.map(aggregateOfPartial);
  for (const at of found.length === 0 ? [] : new Set([0, found.length - 1])) {
    const partial = found[at]!;
    if (!(yield* isCut(tables, range, partial))) continue;
    // A cut prefix group is the next level's groups inside the range: only its own ends go deeper.
    const finer = partial.level !== EXACT && partial.level < PREFIX_LEVELS;
    groups[at] = finer ? { ...combine((yield* reduceGroups(tables, within(range, partial), partial.level + 1))!), key: JSON.parse(partial.keyJson) } : yield* rowsAggregate(tables, range, partial);
  }
  const present = groups.filter((group) => group.count > 0);
  return present.slice(range.skip, range.limit === undefined ? undefined : range.skip + range.limit);
}

/** The range narrowed to the rows of a prefix group (no skip or limit). */
function within(range: ViewRange, partial: Partial): ViewRange {
  const first = partial.gkey.subarray(0, partial.gkey.length - 1);
  // No key has 0xff right after a prefix (type bytes are below 0x20, src/collation/key-layout.ts), so this bound needs no inclusiveness.
  const past = Buffer.concat([first, Buffer.from([0xff])]);
  const { lower, upper } = boundsOf(range);
  const from: Bound = lower === undefined || Buffer.compare(lower.key, first) < 0 ? { key: first, inclusive: true } : lower;
  const to: Bound = upper === undefined || Buffer.compare(upper.key, past) > 0 ? { key: past, inclusive: true } : upper;
  const [start, end] = range.descending ? [to, from] : [from, to];
  return { view: range.view, startKey: start.key, startDocId: start.docId, endKey: end.key, endDocId: end.docId, inclusiveEnd: end.inclusive, descending: range.descending, skip: 0 };
}

/** The whole view's partial, or the level-1 groups of a bounded range combined. */
function* wholeRange(tables: IndexTables, range: ViewRange): SqlSteps<ViewAggregate> {
  if (range.startKey === undefined && range.endKey === undefined) {
    const [row] = yield sqlOf(`SELECT ${PARTIAL_COLUMNS} FROM ${tables.partials} WHERE view = ? AND level = 0`, [range.view]);
    const total: ViewAggregate = { count: 0, numbers: 0, sum: 0, min: null, max: null, sumsqr: 0, distinct: 0 };
    return row === undefined ? total : { ...aggregateOfPartial(partialOf(row)), key: null };
  }
  const groups = (yield* reduceGroups(tables, { ...range, skip: 0, limit: undefined }, 1))!;
  return combine(groups);
}

const bound = (a: number | null, b: number | null, pick: (x: number, y: number) => number): number | null => (a === null ? b : b === null ? a : pick(a, b));

function combine(groups: readonly ViewAggregate[]): ViewAggregate {
  const total: ViewAggregate = { key: null, count: 0, numbers: 0, sum: 0, min: null, max: null, sumsqr: 0, distinct: 0 };
  for (const group of groups) {
    total.count += group.count;
    total.numbers += group.numbers;
    total.sum += group.sum;
    total.sumsqr += group.sumsqr;
    total.min = bound(total.min, group.min, Math.min);
    total.max = bound(total.max, group.max, Math.max);
    total.distinct! += group.distinct ?? 0;
  }
  return total;
}

/** Rows of a view: its whole-view partial's count, one indexed read. */
export function* totalRowsOf(tables: IndexTables, view: number): SqlSteps<number> {
  const [row] = yield sqlOf(`SELECT row_count FROM ${tables.partials} WHERE view = ? AND level = 0`, [view]);
  return row === undefined ? 0 : Number(row['row_count']);
}
