/**
 * Queries over the blocks of view-blocks.ts: the rows before a bound (a map query's `offset`) as the
 * counts of the blocks before it plus the rows of the one block it cuts; the pieces a JavaScript
 * reduce reads a range as (blocks wholly inside it and inside one group, whose stored reduction is
 * current, and the rows between them); the blocks whose reduction is missing; storing reductions.
 */
import type { BlockReduction, ReduceLevel, ReductionPiece, RowPosition, StaleBlock, ViewRange, KeptAnswer } from '../view-store.js';
import { boundsOf, type RangeBound as Bound } from './view-sql.js';
import type { BlockTables } from './view-blocks.js';
import { comparePositions, positionCondition, positionOf, KEPT } from './view-blocks.js';
import type { SqlRow, SqlSteps } from './view-partials.js';
import { EXACT, groupOf, sqlOf } from './view-partials.js';

/** Positions on one side of a bound: `key op ?`, or `(key, doc_id) op (?, ?)` for a bound with a document id. */
function side(bound: Bound, op: '<' | '<=' | '>' | '>=', params: unknown[]): string {
  if (bound.docId === undefined) return (params.push(bound.key), `key ${op} ?`);
  params.push(bound.key, bound.docId);
  return `(key, doc_id) ${op} (?, ?)`;
}

/**
 * Rows of the view at positions where `condition` holds, a condition true for every position up to
 * some point and false after it: the blocks starting before the last block where it holds are whole,
 * and only that block's rows are counted.
 */
function* countWhere(tables: BlockTables, view: number, condition: (params: unknown[]) => string): SqlSteps<number> {
  const params: unknown[] = [view];
  const where = `view = ? AND ${condition(params)}`;
  const [cut] = yield sqlOf(`SELECT key, doc_id, n FROM ${tables.blocks} WHERE ${where} ORDER BY key DESC, doc_id DESC, n DESC LIMIT 1`, params);
  if (cut === undefined) return 0;
  const at = positionOf(cut);
  const wholeParams: unknown[] = [view];
  const whole = `view = ? AND ${positionCondition('<', at, wholeParams)}`;
  const [sum] = yield sqlOf(`SELECT coalesce(sum(row_count), 0) AS c FROM ${tables.blocks} WHERE ${whole}`, wholeParams);
  const restParams: unknown[] = [view];
  const rest = `view = ? AND ${positionCondition('>=', at, restParams)} AND ${condition(restParams)}`;
  const [count] = yield sqlOf(`SELECT count(*) AS c FROM ${tables.rows} WHERE ${rest}`, restParams);
  return Number(sum!['c']) + Number(count!['c']);
}

/** Rows of the view before the range's start in its direction (`offset` without skip), given the view's total. */
export function* rowsBeforeStart(tables: BlockTables, range: ViewRange, total: number): SqlSteps<number> {
  if (range.startKey === undefined) return 0;
  const start: Bound = { key: range.startKey, docId: range.startDocId, inclusive: true };
  if (!range.descending) return yield* countWhere(tables, range.view, (params) => side(start, '<', params));
  return total - (yield* countWhere(tables, range.view, (params) => side(start, '<=', params)));
}

/** Whether two positions fall in one group at `level` (groups are contiguous in key order, so every row between them does too). */
function sameGroup(a: Buffer, b: Buffer, level: ReduceLevel): boolean {
  if (level === 0) return true;
  const numeric = level === 'exact' ? EXACT : level;
  return groupOf(a, numeric).gkey.equals(groupOf(b, numeric).gkey);
}

/** The blocks starting in the range, in key order, each with its reduction by `reducer` when current. */
function* blocksIn(tables: BlockTables, range: ViewRange, reducer: string): SqlSteps<{ at: RowPosition; keyJson: string; value?: SqlRow }[]> {
  const { lower, upper } = boundsOf(range);
  const conditions = (params: unknown[]): string => {
    const parts = [(params.push(range.view), 'view = ?')];
    if (lower !== undefined) parts.push(side(lower, lower.inclusive ? '>=' : '>', params));
    if (upper !== undefined) parts.push(side(upper, upper.inclusive ? '<=' : '<', params));
    return parts.join(' AND ');
  };
  const blockParams: unknown[] = [];
  const blocks = yield sqlOf(`SELECT key, doc_id, n, key_json, version FROM ${tables.blocks} WHERE ${conditions(blockParams)} ORDER BY key, doc_id, n`, blockParams);
  const valueParams: unknown[] = [reducer];
  const values = yield sqlOf(`SELECT key, doc_id, n, version, value, input_size FROM ${tables.values} WHERE reducer = ? AND ${conditions(valueParams)} ORDER BY key, doc_id, n`, valueParams);
  // Two index scans in one order, merged here: a lookup per block would cost a seek each.
  let v = 0;
  return blocks.map((block) => {
    const at = positionOf(block);
    while (v < values.length && comparePositions(positionOf(values[v]!), at) < 0) v++;
    const value = values[v];
    const current = value !== undefined && comparePositions(positionOf(value), at) === 0 && Number(value['version']) === Number(block['version']);
    return { at, keyJson: String(block['key_json']), ...(current ? { value } : {}) };
  });
}

/** The range as pieces in ascending key order: blocks with a current reduction inside it and one group, and rows between them. */
export function* reductionPlan(tables: BlockTables, range: ViewRange, level: ReduceLevel, reducer: string): SqlSteps<ReductionPiece[]> {
  const blocks = yield* blocksIn(tables, range, reducer);
  const pieces: ReductionPiece[] = [];
  let from: RowPosition | undefined;
  // A block is whole in the range when the next one also starts in it; the last one read only when
  // the range runs to the view's end, and (its last key unknown here) lies in one group only ungrouped.
  const lastIsWhole = boundsOf(range).upper === undefined && level === 0;
  for (let i = 0; i < blocks.length; i++) {
    const { at, keyJson, value } = blocks[i]!;
    const next = blocks[i + 1]?.at;
    if (value === undefined || (next === undefined ? !lastIsWhole : !sameGroup(at.key, next.key, level))) continue;
    // Rows before the block, unless it follows a stored block directly or starts the view.
    if (from === undefined ? at.key.length > 0 : comparePositions(from, at) < 0) pieces.push({ kind: 'rows', ...(from === undefined ? {} : { from }), to: at });
    pieces.push({ kind: 'stored', keyJson, key: at.key, valueJson: String(value['value']), inputSize: Number(value['input_size']) });
    if (next === undefined) return pieces;
    from = next;
  }
  pieces.push({ kind: 'rows', ...(from === undefined ? {} : { from }) });
  return pieces;
}

/** Blocks of the view with rows whose reduction by `reducer` is missing or out of date, with their rows. */
export function* staleBlocks(tables: BlockTables, view: number, reducer: string, most: number, after?: RowPosition): SqlSteps<StaleBlock[]> {
  const params: unknown[] = [view];
  // The blocks after `after` are a suffix of the view's: each one's next block is still among them.
  const from = after === undefined ? '' : ` AND ${positionCondition('>', after, params)}`;
  const windowed = `SELECT key, doc_id, n, version, row_count, lead(key) OVER w AS next_key, lead(doc_id) OVER w AS next_doc_id, lead(n) OVER w AS next_n
    FROM ${tables.blocks} WHERE view = ?${from} WINDOW w AS (ORDER BY key, doc_id, n)`;
  const current = `SELECT 1 FROM ${tables.values} v WHERE v.reducer = ? AND v.view = ? AND v.key = b.key AND v.doc_id = b.doc_id AND v.n = b.n AND v.version = b.version`;
  const found = yield sqlOf(`SELECT * FROM (${windowed}) b WHERE b.row_count > 0 AND NOT EXISTS (${current}) ORDER BY key, doc_id, n LIMIT ${Math.floor(most)}`, [...params, reducer, view]);
  const stale: StaleBlock[] = [];
  for (const block of found) {
    const rowParams: unknown[] = [view];
    const at = positionOf(block);
    let where = `view = ? AND ${positionCondition('>=', at, rowParams)}`;
    if (block['next_key'] !== null && block['next_key'] !== undefined) where += ` AND ${positionCondition('<', { key: block['next_key'] as Buffer, docId: String(block['next_doc_id']), n: Number(block['next_n']) }, rowParams)}`;
    const rows = yield sqlOf(`SELECT key_json, doc_id, value FROM ${tables.rows} WHERE ${where} ORDER BY key, doc_id, n`, rowParams);
    stale.push({ at, version: Number(block['version']), rows: rows.map((row) => ({ key: JSON.parse(String(row['key_json'])), id: String(row['doc_id']), value: JSON.parse(String(row['value'])) })) });
  }
  return stale;
}

/** Stores reductions of blocks still at the version they were computed for. */
export function* storeReductions(tables: BlockTables, view: number, reducer: string, reductions: readonly BlockReduction[]): SqlSteps<void> {
  for (const reduction of reductions) {
    const params: unknown[] = [reducer, reduction.valueJson, reduction.inputSize, view];
    const where = `b.view = ? AND b.key = ? AND b.doc_id = ? AND b.n = ? AND b.version = ?`;
    params.push(reduction.at.key, reduction.at.docId, reduction.at.n, reduction.version);
    yield sqlOf(
      `INSERT INTO ${tables.values} (reducer, view, key, doc_id, n, version, value, input_size)
       SELECT ?, b.view, b.key, b.doc_id, b.n, b.version, ?, CAST(? AS INTEGER) FROM ${tables.blocks} b WHERE ${where}
       ON CONFLICT (reducer, view, key, doc_id, n) DO UPDATE SET version = excluded.version, value = excluded.value, input_size = excluded.input_size`,
      params,
    );
  }
}

const KEPT_WHERE = 'reducer = ? AND view = ? AND key = ? AND doc_id = ? AND n = ?';
const keptAt = (view: number, name: string): unknown[] => [KEPT.prefix + name, view, KEPT.at.key, KEPT.at.docId, KEPT.at.n];

/** The answer kept under `name` for the view. */
export function* keptAnswer(tables: BlockTables, view: number, name: string): SqlSteps<KeptAnswer | undefined> {
  const [row] = yield sqlOf(`SELECT value FROM ${tables.values} WHERE ${KEPT_WHERE}`, keptAt(view, name));
  return row === undefined ? undefined : { valueJson: String(row['value']) };
}

/** Keeps an answer for the view until its blocks next change (view-blocks.ts `applyBlocks`). */
export function* keepAnswer(tables: BlockTables, view: number, name: string, answer: KeptAnswer): SqlSteps<void> {
  yield sqlOf(
    `INSERT INTO ${tables.values} (reducer, view, key, doc_id, n, version, value, input_size) VALUES (?, ?, ?, ?, ?, 0, ?, 0)
     ON CONFLICT (reducer, view, key, doc_id, n) DO UPDATE SET value = excluded.value`,
    [...keptAt(view, name), answer.valueJson],
  );
}
