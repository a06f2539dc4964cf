/**
 * Blocks of consecutive rows of a view in key order (`view_blocks_{index_id}`): each block starts at
 * a position (key, document id, emission number) and holds the rows up to the next block's start,
 * with its row count and a version that changes whenever its rows do. A view's first block starts
 * before every key (the empty key). Counting the rows before a position sums the counts of the
 * blocks before it and counts the rows of one block (view-blocks-query.ts), and a JavaScript reduce
 * combines the reductions stored per block (`view_block_values_{index_id}`, valid while their version
 * is the block's). An index update adds and removes rows in the blocks they fall in, splits blocks
 * grown past BLOCK_MAX rows, drops emptied ones and merges small ones into their predecessor, in the
 * same transaction as the rows.
 */
import type { MappedDocument, RowPosition } from '../view-store.js';
import type { SqlRow, SqlSteps } from './view-partials.js';
import { sqlOf } from './view-partials.js';

/** Rows a block is split into pieces of. */
export const BLOCK_ROWS = 128;
/** A block with more rows than this is split. */
const BLOCK_MAX = 2 * BLOCK_ROWS;
/** A block with fewer rows than this is merged into its predecessor when both fit one block. */
const BLOCK_MIN = BLOCK_ROWS / 4;

export interface BlockTables {
  rows: string;
  blocks: string;
  values: string;
}

/** The position before every row: the start of a view's first block. */
const ORIGIN: RowPosition = { key: Buffer.alloc(0), docId: '', n: -1 };

/**
 * Answers kept for a view (view-blocks-query.ts `keepAnswer`) sit in the values table under reducer
 * names starting with KEPT (no view is named so: a reducer is a view's name) at a position no block
 * takes; an update deletes a view's kept answers with the first change to its blocks.
 */
export const KEPT = { prefix: '\u0001', at: { key: Buffer.alloc(0), docId: '', n: -2 } as RowPosition };

/** Orders strings by code point, as SQLite's BINARY and PostgreSQL's "C" compare their UTF-8 bytes. */
export function compareIds(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

export function comparePositions(a: RowPosition, b: RowPosition): number {
  return Buffer.compare(a.key, b.key) || compareIds(a.docId, b.docId) || a.n - b.n;
}

/** `(key, doc_id, n) op (?, ?, ?)` over the columns of a rows or blocks table. */
export function positionCondition(op: string, at: RowPosition, params: unknown[], prefix = ''): string {
  params.push(at.key, at.docId, at.n);
  return `(${prefix}key, ${prefix}doc_id, ${prefix}n) ${op} (?, ?, ?)`;
}

export const positionOf = (row: SqlRow): RowPosition => ({ key: row['key'] as Buffer, docId: String(row['doc_id']), n: Number(row['n']) });

interface Block extends RowPosition {
  keyJson: string;
  rowCount: number;
  changed: boolean;
}

interface Delta extends RowPosition {
  view: number;
  sign: 1 | -1;
}

/** What an update does to the blocks, worked out before the rows change. */
interface BlocksPlan {
  /** Per view, its blocks from the one holding the first touched row to the last touched one. */
  views: Map<number, Block[]>;
  /** The version changed blocks get: above every version the index holds. */
  stamp: number;
}

const CHUNK = 200;

/** The old and new positions of the documents' rows, as deltas per view. */
function* deltasOf(tables: BlockTables, documents: readonly MappedDocument[]): SqlSteps<Map<number, Delta[]>> {
  const perView = new Map<number, Delta[]>();
  const add = (delta: Delta): void => {
    if (!perView.has(delta.view)) perView.set(delta.view, []);
    perView.get(delta.view)!.push(delta);
  };
  for (let i = 0; i < documents.length; i += CHUNK) {
    const ids = documents.slice(i, i + CHUNK).map((document) => document.id);
    const old = yield sqlOf(`SELECT view, key, doc_id, n FROM ${tables.rows} WHERE doc_id IN (${ids.map(() => '?').join(', ')})`, ids);
    for (const row of old) add({ view: Number(row['view']), ...positionOf(row), sign: -1 });
  }
  for (const document of documents) document.rows.forEach((row, n) => add({ view: row.view, key: row.key, docId: document.id, n, sign: 1 }));
  return perView;
}

const blockOf = (row: SqlRow): Block => ({ ...positionOf(row), keyJson: String(row['key_json']), rowCount: Number(row['row_count']), changed: false });
const BLOCK_COLUMNS = 'key, doc_id, n, key_json, row_count';

/** The blocks of a view from the one holding `first` to the last starting at or before `last`. */
function* blocksSpanning(tables: BlockTables, view: number, first: RowPosition, last: RowPosition): SqlSteps<Block[]> {
  const params: unknown[] = [view];
  const before = positionCondition('<=', first, params);
  const [start] = yield sqlOf(`SELECT key, doc_id, n FROM ${tables.blocks} WHERE view = ? AND ${before} ORDER BY key DESC, doc_id DESC, n DESC LIMIT 1`, params);
  if (start === undefined) return [{ ...ORIGIN, keyJson: 'null', rowCount: 0, changed: true }];
  const span: unknown[] = [view];
  const where = `view = ? AND ${positionCondition('>=', positionOf(start), span)} AND ${positionCondition('<=', last, span)}`;
  return (yield sqlOf(`SELECT ${BLOCK_COLUMNS} FROM ${tables.blocks} WHERE ${where} ORDER BY key, doc_id, n`, span)).map(blockOf);
}

/** The last block starting at or before `at` (blocks in order, the first at or before every delta). */
function holder(blocks: readonly Block[], at: RowPosition): Block {
  let low = 0;
  let high = blocks.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (comparePositions(blocks[middle]!, at) <= 0) low = middle;
    else high = middle - 1;
  }
  return blocks[low]!;
}

/** Reads the blocks the documents' old and new rows fall in and counts the rows in and out. */
export function* planBlocks(tables: BlockTables, documents: readonly MappedDocument[]): SqlSteps<BlocksPlan> {
  const perView = yield* deltasOf(tables, documents);
  const [top] = yield sqlOf(`SELECT coalesce(max(version), 0) AS v FROM ${tables.blocks}`);
  const views = new Map<number, Block[]>();
  for (const [view, deltas] of perView) {
    deltas.sort(comparePositions);
    const blocks = yield* blocksSpanning(tables, view, deltas[0]!, deltas[deltas.length - 1]!);
    for (const delta of deltas) {
      const block = holder(blocks, delta);
      block.rowCount += delta.sign;
      block.changed = true;
    }
    views.set(view, blocks);
  }
  return { views, stamp: Number(top?.['v'] ?? 0) + 1 };
}

/** A block grown past BLOCK_MAX as pieces of about BLOCK_ROWS rows, starting at its rows (read after the rows changed). */
function* split(tables: BlockTables, view: number, block: Block): SqlSteps<Block[]> {
  const params: unknown[] = [view];
  const where = `view = ? AND ${positionCondition('>=', block, params)}`;
  const rows = yield sqlOf(`SELECT key, doc_id, n, key_json FROM ${tables.rows} WHERE ${where} ORDER BY key, doc_id, n LIMIT ${block.rowCount}`, params);
  const pieces = Math.ceil(rows.length / BLOCK_ROWS);
  const out: Block[] = [];
  for (let piece = 0; piece < pieces; piece++) {
    const from = Math.floor((piece * rows.length) / pieces);
    const to = Math.floor(((piece + 1) * rows.length) / pieces);
    // The first piece keeps the block's own start (which may lie before its first row).
    const start = piece === 0 ? block : { ...positionOf(rows[from]!), keyJson: String(rows[from]!['key_json']) };
    out.push({ ...start, rowCount: to - from, changed: true });
  }
  return out;
}

/** The blocks after the update: split, dropped when empty (never the first), merged when small. */
function* reshaped(tables: BlockTables, view: number, blocks: readonly Block[], gone: Block[]): SqlSteps<Block[]> {
  const out: Block[] = [];
  for (const block of blocks) {
    const previous = out[out.length - 1];
    const first = block.key.length === 0;
    if (block.changed && block.rowCount > BLOCK_MAX) out.push(...(yield* split(tables, view, block)));
    else if (block.changed && block.rowCount <= 0 && !first) gone.push(block);
    else if (block.changed && !first && previous !== undefined && block.rowCount < BLOCK_MIN && previous.rowCount + block.rowCount <= BLOCK_MAX) {
      previous.rowCount += block.rowCount;
      previous.changed = true;
      gone.push(block);
    } else out.push(block);
  }
  return out;
}

/** After the rows changed: the blocks reshaped and written, with the new version on every changed one. */
export function* applyBlocks(tables: BlockTables, plan: BlocksPlan): SqlSteps<void> {
  for (const [view, blocks] of plan.views) {
    // By the name's first character, not a range: PostgreSQL's collation may ignore control characters in ranges.
    yield sqlOf(`DELETE FROM ${tables.values} WHERE view = ? AND substr(reducer, 1, 1) = ?`, [view, KEPT.prefix]);
    const gone: Block[] = [];
    const kept = yield* reshaped(tables, view, blocks, gone);
    for (let i = 0; i < gone.length; i += CHUNK) {
      const params: unknown[] = [];
      const where = gone.slice(i, i + CHUNK).map((block) => (params.push(view, block.key, block.docId, block.n), '(view = ? AND key = ? AND doc_id = ? AND n = ?)')).join(' OR ');
      yield sqlOf(`DELETE FROM ${tables.blocks} WHERE ${where}`, params);
      yield sqlOf(`DELETE FROM ${tables.values} WHERE ${where}`, params);
    }
    const changed = kept.filter((block) => block.changed);
    for (let i = 0; i < changed.length; i += CHUNK) {
      const params: unknown[] = [];
      const rows = changed.slice(i, i + CHUNK).map((block) => (params.push(view, block.key, block.docId, block.n, block.keyJson, block.rowCount, plan.stamp), '(?, ?, ?, ?, ?, ?, ?)'));
      yield sqlOf(
        `INSERT INTO ${tables.blocks} (view, key, doc_id, n, key_json, row_count, version) VALUES ${rows.join(', ')}
         ON CONFLICT (view, key, doc_id, n) DO UPDATE SET row_count = excluded.row_count, version = excluded.version`,
        params,
      );
    }
  }
}
