/**
 * Stored partial reductions of a view index (`view_reduce_{index_id}`, one table per index next to
 * its rows): per view, the whole view (level 0), each array-key prefix of 1..PREFIX_LEVELS members
 * (arrays at least that long), and each exact key. A partial holds what the built-in reduces need
 * (row count, count/sum/sum of squares/min/max of the numeric values, distinct exact keys), so a
 * reduce reads one partial per group instead of every row. Both backends run the same statements
 * (`?` placeholders; PostgreSQL renumbers them), as steps of a generator: SQLite runs them inside its
 * synchronous write transaction, PostgreSQL inside its transaction, with no second copy of the logic.
 */
import { isArrayKey, valueEnd } from '../../collation/key-layout.js';
import type { EncodedRow, MappedDocument } from '../view-store.js';

/** Array-key prefixes kept as groups of their own; deeper `group_level`s are read from the rows. */
export const PREFIX_LEVELS = 3;
/** The level of exact-key partials. */
export const EXACT = 255;
/** Layout of the partials table; an index without it is rebuilt (format version 2 of view indexes). */
export const PARTIAL_COLUMNS =
  'view, level, gkey, key_json, depth, row_count, num_count, num_sum, num_sumsqr, num_min, num_max, key_count';

interface Sql {
  sql: string;
  params: unknown[];
}
export type SqlRow = Record<string, unknown>;
/** Statements to run in order; each answers the rows of the previous one. */
export type SqlSteps<T> = Generator<Sql, T, SqlRow[]>;

export interface IndexTables {
  rows: string;
  partials: string;
  /** SQLite's hint to read short exact keys by the depth index (its planner prefers the primary key without statistics). */
  byDepth?: string;
}

export const sqlOf = (sql: string, params: unknown[] = []): Sql => ({ sql, params });

/** Members of an encoded array key (0 for any other key; either collation's, src/collation/key-layout.ts). */
function arrayDepth(key: Buffer): number {
  if (!isArrayKey(key)) return 0;
  let depth = 0;
  for (let i = 1; i < key.length && key[i] !== 0x00; i = valueEnd(key, i)) depth++;
  return depth;
}

/** The bytes every key of a level-`level` prefix group starts with (its first `level` members, unclosed). */
function prefixOf(key: Buffer, level: number): Buffer {
  let i = 1;
  for (let n = 0; n < level; n++) i = valueEnd(key, i);
  return key.subarray(0, i);
}

/** A group a key falls in at `level` (0, 1..PREFIX_LEVELS or EXACT); prefix groups only for arrays that long. */
interface GroupAt {
  level: number;
  /** Its key: empty for the whole view, the closed prefix, or the exact key. */
  gkey: Buffer;
  depth: number;
}

/** The group of `key` at a numeric `level` as a reduce query sees it: a prefix group, or the exact key. */
export function groupOf(key: Buffer, level: number): GroupAt {
  const depth = arrayDepth(key);
  if (level >= 1 && depth >= level) return { level, gkey: Buffer.concat([prefixOf(key, level), Buffer.from([0])]), depth };
  return { level: EXACT, gkey: key, depth };
}

/** Every stored group of a key: the view, its prefixes, the exact key. */
function groupsOfKey(key: Buffer): GroupAt[] {
  const depth = arrayDepth(key);
  const groups: GroupAt[] = [{ level: 0, gkey: Buffer.alloc(0), depth: 0 }];
  for (let level = 1; level <= Math.min(depth, PREFIX_LEVELS); level++) groups.push(groupOf(key, level));
  groups.push({ level: EXACT, gkey: key, depth });
  return groups;
}

/** SQL conditions on `key` selecting the rows of a group. */
export function groupCondition(group: { level: number; gkey: Buffer }, params: unknown[]): string {
  if (group.level === 0) return '1 = 1';
  if (group.level === EXACT) return (params.push(group.gkey), 'key = ?');
  const lower = group.gkey.subarray(0, group.gkey.length - 1);
  params.push(lower, Buffer.concat([lower, Buffer.from([0xff])]));
  return 'key >= ? AND key < ?';
}

export interface Partial {
  view: number;
  level: number;
  gkey: Buffer;
  keyJson: string;
  depth: number;
  rowCount: number;
  numCount: number;
  sum: number;
  sumsqr: number;
  min: number | null;
  max: number | null;
  keyCount: number;
}

const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

export function partialOf(row: SqlRow): Partial {
  return {
    view: Number(row['view']),
    level: Number(row['level']),
    gkey: row['gkey'] as Buffer,
    keyJson: String(row['key_json']),
    depth: Number(row['depth']),
    rowCount: Number(row['row_count']),
    numCount: Number(row['num_count']),
    sum: Number(row['num_sum']),
    sumsqr: Number(row['num_sumsqr']),
    min: num(row['num_min']),
    max: num(row['num_max']),
    keyCount: Number(row['key_count']),
  };
}

const idOf = (view: number, level: number, gkey: Buffer): string => `${view}/${level}/${gkey.toString('hex')}`;

/** Rows of statements with many `(view, level, gkey)` triples are split to stay under parameter limits. */
const CHUNK = 200;

function* chunks<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += CHUNK) yield items.slice(i, i + CHUNK);
}

function groupsWhere(groups: readonly { view: number; level: number; gkey: Buffer }[], params: unknown[]): string {
  return groups.map((group) => (params.push(group.view, group.level, group.gkey), '(view = ? AND level = ? AND gkey = ?)')).join(' OR ');
}

interface Change {
  partial: Partial;
  /** A removed value was the group's minimum or maximum: read them again from the rows. */
  extremes: boolean;
  /** A row key whose JSON names a new group. */
  sourceJson: string;
}

/** The key JSON of a group from one of its rows' key JSON. */
function groupJson(level: number, rowKeyJson: string): string {
  if (level === 0) return 'null';
  if (level === EXACT) return rowKeyJson;
  return JSON.stringify((JSON.parse(rowKeyJson) as unknown[]).slice(0, level));
}

function emptyPartial(view: number, group: GroupAt): Partial {
  return { view, level: group.level, gkey: group.gkey, keyJson: '', depth: group.depth, rowCount: 0, numCount: 0, sum: 0, sumsqr: 0, min: null, max: null, keyCount: 0 };
}

/** Adds (`sign` 1) or removes (-1) one row in every group of its key. */
function account(changes: Map<string, Change>, row: { view: number; key: Buffer; keyJson: string; num: number | null }, sign: 1 | -1): void {
  for (const group of groupsOfKey(row.key)) {
    const id = idOf(row.view, group.level, group.gkey);
    let change = changes.get(id);
    if (change === undefined) changes.set(id, (change = { partial: emptyPartial(row.view, group), extremes: false, sourceJson: row.keyJson }));
    const partial = change.partial;
    partial.rowCount += sign;
    if (row.num === null) continue;
    partial.numCount += sign;
    partial.sum += sign * row.num;
    partial.sumsqr += sign * row.num * row.num;
    if (sign === 1) {
      partial.min = partial.min === null ? row.num : Math.min(partial.min, row.num);
      partial.max = partial.max === null ? row.num : Math.max(partial.max, row.num);
    } else change.extremes = true;
  }
}

/** What an update does to the partials, worked out before the rows change. */
interface PartialsPlan {
  changes: Change[];
}

/** Reads the old rows of the documents and the partials they and the new rows touch; answers the deltas merged in. */
export function* planPartials(tables: IndexTables, documents: readonly MappedDocument[]): SqlSteps<PartialsPlan> {
  const changes = new Map<string, Change>();
  for (const ids of chunks(documents.map((document) => document.id))) {
    const old = yield sqlOf(`SELECT view, key, key_json, num FROM ${tables.rows} WHERE doc_id IN (${ids.map(() => '?').join(', ')})`, ids);
    for (const row of old) account(changes, { view: Number(row['view']), key: row['key'] as Buffer, keyJson: String(row['key_json']), num: num(row['num']) }, -1);
  }
  for (const document of documents) for (const row of document.rows) account(changes, row as EncodedRow, 1);
  const stored = new Map<string, Partial>();
  for (const part of chunks([...changes.values()].map((change) => change.partial))) {
    const params: unknown[] = [];
    const found = yield sqlOf(`SELECT ${PARTIAL_COLUMNS} FROM ${tables.partials} WHERE ${groupsWhere(part, params)}`, params);
    for (const row of found) {
      const partial = partialOf(row);
      stored.set(idOf(partial.view, partial.level, partial.gkey), partial);
    }
  }
  const merged = [...changes.entries()].map(([id, change]) => merge(change, stored.get(id)));
  countDistinctKeys(merged, stored);
  return { changes: merged };
}

function merge(change: Change, stored: Partial | undefined): Change {
  const delta = change.partial;
  const base = stored ?? { ...emptyPartial(delta.view, delta), keyJson: groupJson(delta.level, change.sourceJson) };
  const bound = (a: number | null, b: number | null, pick: (x: number, y: number) => number): number | null => (a === null ? b : b === null ? a : pick(a, b));
  const partial: Partial = {
    ...base,
    rowCount: base.rowCount + delta.rowCount,
    numCount: base.numCount + delta.numCount,
    sum: base.sum + delta.sum,
    sumsqr: base.sumsqr + delta.sumsqr,
    min: bound(base.min, delta.min, Math.min),
    max: bound(base.max, delta.max, Math.max),
  };
  // No numbers left: no extremes, and no rounding left over in the sums.
  if (partial.numCount === 0) Object.assign(partial, { sum: 0, sumsqr: 0, min: null, max: null });
  return { partial, extremes: change.extremes && partial.numCount > 0, sourceJson: change.sourceJson };
}

/** Exact keys that appear or disappear change the distinct-key count of their coarser groups. */
function countDistinctKeys(merged: readonly Change[], stored: ReadonlyMap<string, Partial>): void {
  const byId = new Map(merged.map((change) => [idOf(change.partial.view, change.partial.level, change.partial.gkey), change.partial]));
  for (const { partial } of merged) {
    if (partial.level !== EXACT) continue;
    const before = (stored.get(idOf(partial.view, EXACT, partial.gkey))?.rowCount ?? 0) > 0 ? 1 : 0;
    const after = partial.rowCount > 0 ? 1 : 0;
    partial.keyCount = after;
    if (before === after) continue;
    for (const group of groupsOfKey(partial.gkey)) {
      if (group.level !== EXACT) byId.get(idOf(partial.view, group.level, group.gkey))!.keyCount += after - before;
    }
  }
}

/** After the rows changed: the minimum and maximum of groups that lost one read from the rows, then the partials written. */
export function* applyPartials(tables: IndexTables, plan: PartialsPlan): SqlSteps<void> {
  for (const change of plan.changes) {
    if (!change.extremes) continue;
    const params: unknown[] = [change.partial.view];
    const where = groupCondition(change.partial, params);
    const [found] = yield sqlOf(`SELECT min(num) AS lo, max(num) AS hi FROM ${tables.rows} WHERE view = ? AND ${where}`, params);
    change.partial.min = num(found?.['lo']);
    change.partial.max = num(found?.['hi']);
  }
  const live = plan.changes.map((change) => change.partial).filter((partial) => partial.rowCount > 0);
  const gone = plan.changes.map((change) => change.partial).filter((partial) => partial.rowCount <= 0);
  for (const part of chunks(gone)) {
    const params: unknown[] = [];
    yield sqlOf(`DELETE FROM ${tables.partials} WHERE ${groupsWhere(part, params)}`, params);
  }
  for (const part of chunks(live)) {
    const params: unknown[] = [];
    const values = part.map((p) => (params.push(p.view, p.level, p.gkey, p.keyJson, p.depth, p.rowCount, p.numCount, p.sum, p.sumsqr, p.min, p.max, p.keyCount), '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'));
    const update = PARTIAL_COLUMNS.split(', ').slice(3).map((column) => `${column} = excluded.${column}`).join(', ');
    yield sqlOf(`INSERT INTO ${tables.partials} (${PARTIAL_COLUMNS}) VALUES ${values.join(', ')} ON CONFLICT (view, level, gkey) DO UPDATE SET ${update}`, params);
  }
}
