/**
 * A JavaScript reduce answered from the reductions storage keeps per block of rows (blocks of about
 * 128 consecutive rows in key order, docs/views.md "Reduce"): first the blocks whose reduction is
 * missing or out of date are reduced in the sandbox and stored (one updater per index), then each
 * group of the range combines the stored reductions of the blocks wholly inside it with a reduce of
 * the rows at its edges. A whole-view or wide reduce so reads O(blocks + edge rows), not every row.
 */
import type { Json, JsonObject } from '../json/json.js';
import type { ReductionPiece, RowPosition, StaleBlock, ViewRange } from '../storage/storage.js';
import type { KeyCollation } from '../collation/key-collation.js';
import { groupEncoding, groupKey, rawReduce, reduceToKeep, reduceWithJs, rowOf, type JsGroup, type Reducer } from './js-reduce.js';
import { inputSizeOf } from './reduce-limit.js';
import type { CheckedArgs } from './view-ranges.js';
import { rangesOf } from './view-ranges.js';
import { rangeRows, type IndexAt } from './view-query.js';

/** Blocks reduced per sandbox request while bringing the stored reductions up to date. */
const FILL_BATCH = 64;

/**
 * The index sequence at which this process last found every block reduction of a view current, by
 * storage (two servers in one process may hold a database of one name at one sequence), then by
 * database, signature, view and reducer (bounded, oldest out). Only saves the look for stale blocks:
 * a query never uses a reduction whose version is not its block's, so a stale entry costs speed only.
 */
const filledAt = new WeakMap<IndexAt['storage'], Map<string, number>>();

/**
 * Reduces and stores every block of the view whose reduction is missing or out of date (one updater
 * per index). Called after each index update (views.ts) so that a query finds them current, and by
 * the query itself in case that update's fill failed or another process updated the index.
 */
export async function fillReductions(index: IndexAt, reducer: Reducer): Promise<void> {
  const views = index.storage.views;
  const name = JSON.stringify([index.db, index.signature, index.view, reducer.view]);
  const filled = filledAt.get(index.storage) ?? new Map<string, number>();
  filledAt.set(index.storage, filled);
  if (index.seq !== undefined && filled.get(name) === index.seq) return;
  const stale = (after?: RowPosition) => views.staleBlocks(index.db, index.signature, index.view, reducer.view, FILL_BATCH, after);
  // Most queries find every reduction current: no lock taken then.
  if ((await stale()).length > 0) await fill(index, reducer, stale);
  if (index.seq === undefined) return;
  if (filled.size >= 1000) filled.delete(filled.keys().next().value!);
  filled.set(name, index.seq);
}

/** Under the index's updater lock (looked for again there: another process may have stored them meanwhile). */
async function fill(index: IndexAt, reducer: Reducer, stale: (after?: RowPosition) => Promise<StaleBlock[]>): Promise<void> {
  const views = index.storage.views;
  await views.exclusive(index.db, index.signature, async () => {
    for (let found = await stale(); found.length > 0; found = found.length < FILL_BATCH ? [] : await stale(found[found.length - 1]!.at)) {
      await index.turns.maybeYield();
      const argLists: Json[][] = found.map((block) => [block.rows.map((row) => [row.key, row.id]), block.rows.map((row) => row.value), false]);
      const values = await rawReduce(reducer, argLists, index.turns);
      const reductions = found.map((block, i) => ({ at: block.at, version: block.version, valueJson: JSON.stringify(values[i]!), inputSize: inputSizeOf(reducer.source, argLists[i]!) }));
      await views.storeReductions(index.db, index.signature, index.view, reducer.view, reductions);
    }
  });
}

/** Collects the pieces of one range into its groups, in the range's order; stops once `wanted` groups are complete. */
class GroupCollector {
  readonly groups: JsGroup[] = [];
  #last: Buffer | undefined;

  constructor(
    readonly level: CheckedArgs['level'],
    readonly collation: KeyCollation,
  ) {}

  #place(key: Json, encoded: Buffer): JsGroup {
    if (this.#last === undefined || !this.#last.equals(encoded)) {
      this.groups.push({ key, rows: [], stored: [] });
      this.#last = encoded;
    }
    return this.groups[this.groups.length - 1]!;
  }

  stored(piece: Extract<ReductionPiece, { kind: 'stored' }>): void {
    const key = groupKey(JSON.parse(piece.keyJson) as Json, this.level);
    this.#place(key, groupEncoding(key, piece.key, this.level, this.collation)).stored!.push({ value: JSON.parse(piece.valueJson) as Json, inputSize: piece.inputSize });
  }

  row(row: { key: Json; id: string; value: Json; encoded: Buffer }): void {
    const key = groupKey(row.key, this.level);
    this.#place(key, groupEncoding(key, row.encoded, this.level, this.collation)).rows.push(row);
  }
}

async function groupsOfRange(index: IndexAt, range: ViewRange, level: CheckedArgs['level'], collation: KeyCollation, reducer: string, wanted: number): Promise<JsGroup[]> {
  const pieces = await index.storage.views.reductionPlan(index.db, index.signature, range, level, reducer);
  if (range.descending) pieces.reverse();
  const collector = new GroupCollector(level, collation);
  for (const piece of pieces) {
    // The group after the wanted ones has started: those are complete.
    if (collector.groups.length > wanted) break;
    if (piece.kind === 'stored') collector.stored(piece);
    else for (const row of (await rangeRows(index, { ...range, from: piece.from, to: piece.to })).rows) collector.row(row);
  }
  return collector.groups.slice(0, wanted);
}

/** Groups a kept answer may hold at most: a query with more is computed each time (it reads that many rows anyway). */
const KEEP_MAX_GROUPS = 1000;

/** Names a kept answer: the reduce function, the `reduce_limit` settings it was checked under, the group level and direction. */
const keptName = (reducer: Reducer, args: CheckedArgs): string =>
  JSON.stringify([reducer.view, reducer.limit.mode, reducer.limit.threshold, reducer.limit.ratio, args.level, args.descending === true]);

/**
 * The groups of a whole view (no bounds, keys or partition) at the query's level, kept after a query
 * computes them all until the view's rows change, as CouchDB reads its B-tree's stored reductions: a
 * query then reads one row instead of every block's reduction. Computed as the only updater, so no
 * update lands between reading the blocks and keeping the result. Undefined for a query with a
 * `limit` when nothing is kept (it computes only the groups it returns).
 */
async function keptGroups(index: IndexAt, range: ViewRange, args: CheckedArgs, reducer: Reducer): Promise<JsonObject[] | undefined> {
  const views = index.storage.views;
  const name = keptName(reducer, args);
  const kept = async () => {
    const answer = await views.keptAnswer(index.db, index.signature, index.view, name);
    return answer === undefined ? undefined : (JSON.parse(answer.valueJson) as JsonObject[]);
  };
  const found = await kept();
  if (found !== undefined || args.limit !== undefined) return found;
  return views.exclusive(index.db, index.signature, async () => {
    const again = await kept();
    if (again !== undefined) return again;
    const groups = await groupsOfRange(index, range, args.level, args.collation, reducer.view, Number.MAX_SAFE_INTEGER);
    const { values, keep } = await reduceToKeep(reducer, groups, index.turns);
    const rows = groups.map((group, i) => rowOf(group.key, values[i]!));
    if (keep && groups.length <= KEEP_MAX_GROUPS) await views.keepAnswer(index.db, index.signature, index.view, name, { valueJson: JSON.stringify(rows) });
    return rows;
  });
}

/** Whether a query reads a whole view: no keys, bounds or partition. */
const wholeView = (args: CheckedArgs, range: ViewRange): boolean =>
  args.keys === undefined && args.partition === undefined && range.startKey === undefined && range.endKey === undefined && range.startDocId === undefined && range.endDocId === undefined;

/**
 * `{rows}` of a JavaScript-reduced query from the stored block reductions; undefined for a grouped
 * partition query (a partitioned index's keys start with the partition, which blocks do not group by).
 */
export async function storedJsReduce(index: IndexAt, args: CheckedArgs, reducer: Reducer): Promise<JsonObject[] | undefined> {
  if (args.partition !== undefined && args.level !== 0) return undefined;
  await fillReductions(index, reducer);
  const limit = args.limit ?? Number.MAX_SAFE_INTEGER;
  // With `keys`, each key is its own range: a group never spans two of them.
  const queries = args.keys === undefined ? [args] : args.keys.map((key) => ({ ...args, keys: [key] }));
  const wanted = args.keys === undefined ? args.skip + limit : Number.MAX_SAFE_INTEGER;
  const groups: JsGroup[] = [];
  for (const query of queries) {
    for (const range of rangesOf(query, index.view)) {
      const whole = wholeView(args, range) ? await keptGroups(index, { ...range, skip: 0, limit: undefined, countOffset: false }, args, reducer) : undefined;
      if (whole !== undefined) return whole.slice(args.skip, args.skip + limit);
      await index.turns.maybeYield();
      groups.push(...(await groupsOfRange(index, { ...range, skip: 0, limit: undefined, countOffset: false }, args.level, args.collation, reducer.view, wanted - groups.length)));
    }
  }
  const selected = groups.slice(args.skip, args.skip + limit);
  const values = await reduceWithJs(reducer, selected, index.turns);
  return selected.map((group, i) => rowOf(group.key, values[i]!));
}

