/**
 * The SQLite view store: a `view_indexes` catalog row per (database, signature) and a
 * `view_rows_{index_id}` table per index, clustered on (view, key, doc_id, n) (WITHOUT ROWID), so a
 * range is one index scan; a narrow index on (view, key, num) answers `offset` counts and the
 * aggregates of the built-in reduces without reading the keys' and values' JSON. Writes share the storage's write queue (group commit).
 */
import type { Json } from '../../json/json.js';
import type {
  BlockReduction,
  MappedDocument,
  ReduceLevel,
  ReductionPiece,
  RowPosition,
  StaleBlock,
  ViewAggregate,
  ViewIndexInfo,
  ViewRange,
  ViewIndexSizes,
  ViewRow,
  ViewRowsResult,
  ViewStore,
  KeptAnswer,
} from '../view-store.js';
import { AnswerCache, aggregateColumns, aggregateOf, rangeConditions } from '../kit/view-sql.js';
import { applyBlocks, planBlocks, type BlockTables } from '../kit/view-blocks.js';
import { reductionPlan, rowsBeforeStart, staleBlocks, storeReductions, keepAnswer, keptAnswer } from '../kit/view-blocks-query.js';
import { applyPartials, planPartials, type IndexTables, type SqlRow, type SqlSteps } from '../kit/view-partials.js';
import { reduceGroups, totalRowsOf } from '../kit/view-partials-query.js';
import type { Connection, Statement } from './sqlite-connection.js';
import type { WriteQueue } from './sqlite-write-queue.js';
import { holding, type NamedLocks } from '../../locks/named-locks.js';
import { StatementCache } from './sqlite-statement-cache.js';
import { SqliteIndexCatalog, type IndexRow } from './sqlite-index-catalog.js';

const table = (indexId: number): string => `view_rows_${indexId}`;
const tablesOf = (indexId: number): IndexTables & BlockTables => ({
  rows: table(indexId),
  partials: `view_reduce_${indexId}`,
  byDepth: `INDEXED BY view_reduce_${indexId}_depths`,
  blocks: `view_blocks_${indexId}`,
  values: `view_block_values_${indexId}`,
});
/** The statements that drop one view index's tables. */
export const dropViewTables = (indexId: number): string => {
  const { rows, partials, blocks, values } = tablesOf(indexId);
  return [rows, partials, blocks, values].map((name) => `DROP TABLE IF EXISTS ${name};`).join(' ');
};


/** A view row whose encoded key is decoded from its hex text on first use (most answers never use it). */
class HexKeyedRow implements ViewRow {
  #encoded: Buffer | undefined;

  constructor(
    readonly key: Json,
    readonly id: string,
    readonly value: Json,
    readonly hex: string,
  ) {}

  get encoded(): Buffer {
    return (this.#encoded ??= Buffer.from(this.hex, 'hex'));
  }
}

export class SqliteViewStore implements ViewStore {
  readonly #db: Connection;
  readonly #queue: WriteQueue;
  readonly #catalog: SqliteIndexCatalog;
  readonly #statements: StatementCache;
  readonly #locks: NamedLocks;
  readonly #aggregates = new AnswerCache<ViewAggregate[]>();
  readonly #sizes = new AnswerCache<ViewIndexSizes>();

  constructor(db: Connection, queue: WriteQueue, databaseId: (name: string) => number, locks: NamedLocks) {
    this.#db = db;
    this.#statements = new StatementCache(db);
    this.#queue = queue;
    this.#catalog = new SqliteIndexCatalog(this.#statements, databaseId, 'view_indexes', 'view');
    this.#locks = locks;
  }

  #statement(sql: string): Statement {
    return this.#statements.get(sql);
  }

  /** Runs the statements of a partials step (inside the caller's transaction when writing). */
  #run<T>(steps: SqlSteps<T>): T {
    let next = steps.next([]);
    while (next.done !== true) {
      const statement = this.#statement(next.value.sql);
      const rows = statement.reader ? (statement.all(...next.value.params) as SqlRow[]) : (statement.run(...next.value.params), []);
      next = steps.next(rows);
    }
    return next.value;
  }

  /** Drops the cached statements naming these tables (as whole names: `view_rows_1` is not `view_rows_12`). */
  #forgetStatements(...tables: string[]): void {
    this.#statements.forget(new RegExp(`\\b(?:${tables.join('|')})\\b`));
  }

  /** The index's tables, created empty (rows, their partial reductions, their blocks and the blocks' reductions). */
  #createTables(indexId: number): void {
    const { rows, partials, blocks, values } = tablesOf(indexId);
    this.#db.exec(
      `${dropViewTables(indexId)}
       CREATE TABLE ${rows} (view INTEGER NOT NULL, key BLOB NOT NULL, doc_id TEXT NOT NULL, n INTEGER NOT NULL,
         key_json TEXT NOT NULL, value TEXT NOT NULL, num REAL, PRIMARY KEY (view, key, doc_id, n)) WITHOUT ROWID;
       CREATE INDEX ${rows}_docs ON ${rows} (doc_id);
       CREATE INDEX ${rows}_sums ON ${rows} (view, key, num);
       CREATE TABLE ${partials} (view INTEGER NOT NULL, level INTEGER NOT NULL, gkey BLOB NOT NULL, key_json TEXT NOT NULL,
         depth INTEGER NOT NULL, row_count INTEGER NOT NULL, num_count INTEGER NOT NULL, num_sum REAL NOT NULL,
         num_sumsqr REAL NOT NULL, num_min REAL, num_max REAL, key_count INTEGER NOT NULL,
         PRIMARY KEY (view, level, gkey)) WITHOUT ROWID;
       CREATE INDEX ${partials}_depths ON ${partials} (view, level, depth, gkey);
       CREATE TABLE ${blocks} (view INTEGER NOT NULL, key BLOB NOT NULL, doc_id TEXT NOT NULL, n INTEGER NOT NULL,
         key_json TEXT NOT NULL, row_count INTEGER NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (view, key, doc_id, n)) WITHOUT ROWID;
       CREATE INDEX ${blocks}_versions ON ${blocks} (version);
       CREATE TABLE ${values} (reducer TEXT NOT NULL, view INTEGER NOT NULL, key BLOB NOT NULL, doc_id TEXT NOT NULL, n INTEGER NOT NULL,
         version INTEGER NOT NULL, value TEXT NOT NULL, input_size INTEGER NOT NULL, PRIMARY KEY (reducer, view, key, doc_id, n)) WITHOUT ROWID;`,
    );
    this.#forgetStatements(rows, partials, blocks, values);
  }

  /** An index of a format before blocks has no blocks table: it is built again. */
  #current(index: IndexRow): boolean {
    return this.#statement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(tablesOf(index.index_id).values) !== undefined;
  }

  async open(db: string, signature: string): Promise<number> {
    const known = this.#catalog.find(db, signature);
    if (known !== undefined && this.#current(known)) return known.update_seq;
    return this.#queue.enqueue(() => {
      const again = this.#catalog.find(db, signature);
      if (again !== undefined && this.#current(again)) return again.update_seq;
      const indexId = again?.index_id ?? this.#catalog.add(db, signature);
      this.#createTables(indexId);
      this.#catalog.reached(indexId, 0);
      return 0;
    });
  }

  update(db: string, signature: string, documents: readonly MappedDocument[], updateSeq: number): Promise<void> {
    return this.#queue.enqueue(() => {
      const { index_id: indexId } = this.#catalog.existing(db, signature);
      const plan = this.#run(planPartials(tablesOf(indexId), documents));
      const blocks = this.#run(planBlocks(tablesOf(indexId), documents));
      const remove = this.#statement(`DELETE FROM ${table(indexId)} WHERE doc_id = ?`);
      const insert = this.#statement(`INSERT INTO ${table(indexId)} (view, key, doc_id, n, key_json, value, num) VALUES (?, ?, ?, ?, ?, ?, ?)`);
      for (const document of documents) {
        remove.run(document.id);
        document.rows.forEach((row, n) => insert.run(row.view, row.key, document.id, n, row.keyJson, row.valueJson, row.num));
      }
      this.#run(applyPartials(tablesOf(indexId), plan));
      this.#run(applyBlocks(tablesOf(indexId), blocks));
      this.#catalog.reached(indexId, updateSeq);
      // Not durable (no fsync of its own, sqlite-write-queue.ts): a batch lost to a power cut goes
      // with its update_seq, and the index maps those changes again.
    }, false);
  }

  async rows(db: string, signature: string, range: ViewRange): Promise<ViewRowsResult> {
    const index = this.#catalog.existing(db, signature);
    const name = table(index.index_id);
    const params: unknown[] = [];
    const param = (value: unknown): string => (params.push(value), '?');
    const where = rangeConditions(range, param);
    const order = range.descending ? 'DESC' : 'ASC';
    const sorted = `ORDER BY key ${order}, doc_id ${order}, n ${order}`;
    // One text for the whole page, parsed once: a value per row and column (a Buffer per key above
    // all) costs several times the read itself. Keys come as hex, decoded when asked (HexKeyedRow).
    const page = `SELECT key, key_json, doc_id, value, n FROM ${name} WHERE ${where} ${sorted} LIMIT ? OFFSET ?`;
    const sql = `SELECT group_concat('["' || hex(key) || '",' || json_quote(doc_id) || ',' || key_json || ',' || value || ']', ',' ${sorted}) FROM (${page})`;
    const text = this.#statement(sql).pluck(true).get(...params, range.limit ?? -1, range.skip) as string | null;
    const totalRows = this.#run(totalRowsOf(tablesOf(index.index_id), range.view));
    const rowsBefore = range.countOffset === false ? 0 : this.#run(rowsBeforeStart(tablesOf(index.index_id), range, totalRows));
    return {
      totalRows,
      offset: rowsBefore + range.skip,
      rows: text === null ? [] : (JSON.parse(`[${text}]`) as [string, string, Json, Json][]).map(([hex, id, key, value]) => new HexKeyedRow(key, id, value, hex)),
    };
  }

  async aggregate(db: string, signature: string, range: ViewRange, grouped = false): Promise<ViewAggregate[]> {
    const index = this.#catalog.existing(db, signature);
    const name = table(index.index_id);
    const params: unknown[] = [];
    const where = rangeConditions(range, (value) => (params.push(value), '?'));
    const order = range.descending ? 'DESC' : 'ASC';
    const tail = grouped ? ` GROUP BY key ORDER BY key ${order} LIMIT ? OFFSET ?` : '';
    if (grouped) params.push(range.limit ?? -1, range.skip);
    const sql = `SELECT ${aggregateColumns(grouped, (e) => `total(${e})`)} FROM ${name} WHERE ${where}${tail}`;
    return this.#aggregates.get(name, index.update_seq, sql, params, () => (this.#statement(sql).all(...params) as Record<string, unknown>[]).map(aggregateOf));
  }

  async reduce(db: string, signature: string, range: ViewRange, level: ReduceLevel): Promise<ViewAggregate[] | undefined> {
    return this.#run(reduceGroups(tablesOf(this.#catalog.existing(db, signature).index_id), range, level));
  }

  async reductionPlan(db: string, signature: string, range: ViewRange, level: ReduceLevel, reducer: string): Promise<ReductionPiece[]> {
    return this.#run(reductionPlan(tablesOf(this.#catalog.existing(db, signature).index_id), range, level, reducer));
  }

  async staleBlocks(db: string, signature: string, view: number, reducer: string, most: number, after?: RowPosition): Promise<StaleBlock[]> {
    return this.#run(staleBlocks(tablesOf(this.#catalog.existing(db, signature).index_id), view, reducer, most, after));
  }

  storeReductions(db: string, signature: string, view: number, reducer: string, reductions: readonly BlockReduction[]): Promise<void> {
    return this.#queue.enqueue(() => this.#run(storeReductions(tablesOf(this.#catalog.existing(db, signature).index_id), view, reducer, reductions)));
  }

  async keptAnswer(db: string, signature: string, view: number, reducer: string): Promise<KeptAnswer | undefined> {
    return this.#run(keptAnswer(tablesOf(this.#catalog.existing(db, signature).index_id), view, reducer));
  }

  keepAnswer(db: string, signature: string, view: number, reducer: string, reduction: KeptAnswer): Promise<void> {
    return this.#queue.enqueue(() => this.#run(keepAnswer(tablesOf(this.#catalog.existing(db, signature).index_id), view, reducer, reduction)));
  }

  /**
   * `file` and `active` from SQLite's `dbstat` (the pages of the index's tables and their indexes,
   * and the bytes of the records in them); `external` the keys' and values' JSON. Computed once per
   * update sequence of the index.
   */
  async sizes(db: string, signature: string): Promise<ViewIndexSizes | undefined> {
    const index = this.#catalog.find(db, signature);
    if (index === undefined || !this.#current(index)) return undefined;
    const { rows, partials } = tablesOf(index.index_id);
    const names = [rows, `${rows}_docs`, `${rows}_sums`, partials, `${partials}_depths`];
    const pagesSql = `SELECT coalesce(sum(pgsize), 0) AS file, coalesce(sum(payload), 0) AS active FROM dbstat WHERE name IN (${names.map(() => '?').join(', ')})`;
    const jsonSql = `SELECT coalesce(sum(length(CAST(key_json AS BLOB)) + length(CAST(value AS BLOB))), 0) AS external FROM ${rows}`;
    return this.#sizes.get(rows, index.update_seq, pagesSql, names, () => {
      const pages = this.#statement(pagesSql).get(...names) as { file: number; active: number };
      const json = this.#statement(jsonSql).get() as { external: number };
      return { file: pages.file, active: pages.active, external: json.external };
    });
  }

  async list(db: string): Promise<ViewIndexInfo[]> {
    const indexes = this.#catalog.all(db);
    return indexes.map((index) => ({
      signature: index.signature,
      updateSeq: index.update_seq,
      rows: (this.#statement(`SELECT coalesce(sum(row_count), 0) AS c FROM ${tablesOf(index.index_id).partials} WHERE level = 0`).get() as { c: number }).c,
    }));
  }

  drop(db: string, signatures: readonly string[]): Promise<number> {
    return this.#queue.enqueue(() => {
      let dropped = 0;
      for (const signature of signatures) {
        const index = this.#catalog.find(db, signature);
        if (index === undefined) continue;
        const { rows, partials, blocks, values } = tablesOf(index.index_id);
        this.#forgetStatements(rows, partials, blocks, values);
        this.#db.exec(dropViewTables(index.index_id));
        this.#catalog.remove(index.index_id);
        dropped++;
      }
      return dropped;
    });
  }

  /** One updater per index across the worker processes sharing the file (the server's named locks). */
  async exclusive<T>(db: string, signature: string, work: () => Promise<T>): Promise<T> {
    return holding(this.#locks, `view\u0000${db}\u0000${signature}`, work);
  }
}
