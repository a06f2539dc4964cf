/**
 * The PostgreSQL view store: a `view_indexes` catalog row per (database, signature) and a
 * `view_rows_{index_id}` table per index with a B-tree on (view, key, doc_id, n): `key` is `bytea`
 * (compared byte by byte, as the encoding needs), `doc_id` is COLLATE "C". Nodes sharing the schema
 * share the indexes; one node at a time updates an index (an advisory lock on its name).
 */
import type pg from 'pg';
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
  ViewRowsResult,
  ViewStore,
  KeptAnswer,
} from '../view-store.js';
import { AnswerCache, aggregateColumns, aggregateOf, rangeConditions } from '../kit/view-sql.js';
import { applyBlocks, planBlocks, type BlockTables } from '../kit/view-blocks.js';
import { reductionPlan, rowsBeforeStart, staleBlocks, storeReductions, keepAnswer, keptAnswer } from '../kit/view-blocks-query.js';
import { inTransaction } from './postgres-connection.js';
import { applyPartials, planPartials, type IndexTables, type SqlRow, type SqlSteps } from '../kit/view-partials.js';
import { reduceGroups, totalRowsOf } from '../kit/view-partials-query.js';
import { withIndexLock } from './postgres-index-lock.js';

/** Advisory-lock class of view index updates ('VIEW' in ASCII). */
const VIEW_LOCK_CLASS = 0x56494557;
/** Advisory-lock class of view index creation ('VNEW'): taken inside an update, so never the update's. */
const CREATE_LOCK_CLASS = 0x564e4557;

interface IndexRow {
  index_id: string;
  signature: string;
  update_seq: number;
}

const table = (indexId: string | number): string => `view_rows_${indexId}`;
const tablesOf = (indexId: string | number): IndexTables & BlockTables => ({
  rows: table(indexId),
  partials: `view_reduce_${indexId}`,
  blocks: `view_blocks_${indexId}`,
  values: `view_block_values_${indexId}`,
});
const tableList = (indexId: string | number): string => {
  const { rows, partials, blocks, values } = tablesOf(indexId);
  return [rows, partials, blocks, values].join(', ');
};

/** Runs the statements of a partials step on one client or the pool (`?` numbered as `$n`). */
async function run<T>(client: pg.ClientBase | pg.Pool, steps: SqlSteps<T>): Promise<T> {
  let next = steps.next([]);
  while (next.done !== true) {
    let n = 0;
    const { rows } = await client.query(next.value.sql.replace(/\?/g, () => `$${++n}`), next.value.params);
    next = steps.next(rows as SqlRow[]);
  }
  return next.value;
}

/** The statement that drops one view index's tables. */
export const dropViewTables = (indexId: string | number): string => `DROP TABLE IF EXISTS ${tableList(indexId)}`;

export class PostgresViewStore implements ViewStore {
  readonly #pool: pg.Pool;
  readonly #schema: string;
  readonly #aggregates = new AnswerCache<ViewAggregate[]>();

  constructor(pool: pg.Pool, schema: string) {
    this.#pool = pool;
    this.#schema = schema;
  }

  async #index(db: string, signature: string): Promise<IndexRow | undefined> {
    const { rows } = await this.#pool.query<IndexRow>(
      `SELECT v.index_id, v.signature, v.update_seq FROM view_indexes v JOIN databases d ON d.db_id = v.db_id
       WHERE d.name = $1 AND v.signature = $2`,
      [db, signature],
    );
    return rows[0];
  }

  async #table(db: string, signature: string): Promise<string> {
    const index = await this.#index(db, signature);
    if (index === undefined) throw new Error(`no view index ${signature} in ${db}`);
    return table(index.index_id);
  }

  /** An index of a format before blocks has no block values table: it is built again. */
  async #current(indexId: string): Promise<boolean> {
    const { rows } = await this.#pool.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [tablesOf(indexId).values]);
    return rows[0]?.found !== null;
  }

  async open(db: string, signature: string): Promise<number> {
    const known = await this.#index(db, signature);
    if (known !== undefined && (await this.#current(known.index_id))) return Number(known.update_seq);
    return inTransaction(this.#pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1::int4, hashtext($2))', [CREATE_LOCK_CLASS, JSON.stringify([this.#schema, db, signature])]);
      const { rows } = await client.query<{ index_id: string; update_seq: number }>(
        `INSERT INTO view_indexes (db_id, signature) SELECT db_id, $2 FROM databases WHERE name = $1
         ON CONFLICT (db_id, signature) DO UPDATE SET signature = EXCLUDED.signature RETURNING index_id, update_seq`,
        [db, signature],
      );
      const created = rows[0];
      if (created === undefined) throw new Error(`no database ${db}`);
      const { rows: name, partials, blocks, values } = tablesOf(created.index_id);
      const { rows: exists } = await client.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [values]);
      if (exists[0]?.found !== null) return Number(created.update_seq);
      await client.query(dropViewTables(created.index_id));
      await client.query(
        `CREATE TABLE ${name} (view integer NOT NULL, key bytea NOT NULL, doc_id text COLLATE "C" NOT NULL, n integer NOT NULL,
           key_json text NOT NULL, value text NOT NULL, num double precision, PRIMARY KEY (view, key, doc_id, n))`,
      );
      await client.query(`CREATE INDEX ${name}_docs ON ${name} (doc_id)`);
      await client.query(`CREATE INDEX ${name}_sums ON ${name} (view, key) INCLUDE (num, doc_id)`);
      await client.query(
        `CREATE TABLE ${partials} (view integer NOT NULL, level integer NOT NULL, gkey bytea NOT NULL, key_json text NOT NULL,
           depth integer NOT NULL, row_count bigint NOT NULL, num_count bigint NOT NULL, num_sum double precision NOT NULL,
           num_sumsqr double precision NOT NULL, num_min double precision, num_max double precision, key_count bigint NOT NULL,
           PRIMARY KEY (view, level, gkey))`,
      );
      await client.query(`CREATE INDEX ${partials}_depths ON ${partials} (view, level, depth, gkey)`);
      await client.query(
        `CREATE TABLE ${blocks} (view integer NOT NULL, key bytea NOT NULL, doc_id text COLLATE "C" NOT NULL, n integer NOT NULL,
           key_json text NOT NULL, row_count bigint NOT NULL, version bigint NOT NULL, PRIMARY KEY (view, key, doc_id, n))`,
      );
      await client.query(`CREATE INDEX ${blocks}_versions ON ${blocks} (version)`);
      await client.query(
        `CREATE TABLE ${values} (reducer text NOT NULL, view integer NOT NULL, key bytea NOT NULL, doc_id text COLLATE "C" NOT NULL, n integer NOT NULL,
           version bigint NOT NULL, value text NOT NULL, input_size integer NOT NULL, PRIMARY KEY (reducer, view, key, doc_id, n))`,
      );
      await client.query('UPDATE view_indexes SET update_seq = 0 WHERE index_id = $1', [created.index_id]);
      return 0;
    });
  }

  async update(db: string, signature: string, documents: readonly MappedDocument[], updateSeq: number): Promise<void> {
    const name = await this.#table(db, signature);
    const indexId = name.slice('view_rows_'.length);
    const columns: unknown[][] = [[], [], [], [], [], [], []];
    for (const document of documents) {
      document.rows.forEach((row, n) => {
        [row.view, row.key, document.id, n, row.keyJson, row.valueJson, row.num].forEach((value, i) => columns[i]!.push(value));
      });
    }
    await inTransaction(this.#pool, async (client) => {
      // A batch lost to a crash goes with its update_seq: the index maps those changes again.
      await client.query('SET LOCAL synchronous_commit = off');
      const plan = await run(client, planPartials(tablesOf(indexId), documents));
      const blocks = await run(client, planBlocks(tablesOf(indexId), documents));
      await client.query(`DELETE FROM ${name} WHERE doc_id = ANY($1::text[])`, [documents.map((document) => document.id)]);
      await client.query(
        `INSERT INTO ${name} (view, key, doc_id, n, key_json, value, num)
         SELECT * FROM unnest($1::int4[], $2::bytea[], $3::text[], $4::int4[], $5::text[], $6::text[], $7::float8[])`,
        columns,
      );
      await run(client, applyPartials(tablesOf(indexId), plan));
      await run(client, applyBlocks(tablesOf(indexId), blocks));
      await client.query(`UPDATE view_indexes SET update_seq = $2 WHERE index_id = $1`, [indexId, updateSeq]);
    });
  }

  async rows(db: string, signature: string, range: ViewRange): Promise<ViewRowsResult> {
    const name = await this.#table(db, signature);
    const params: unknown[] = [];
    const param = (value: unknown): string => (params.push(value), `$${params.length}`);
    const where = rangeConditions(range, param);
    const order = range.descending ? 'DESC' : 'ASC';
    const limit = range.limit === undefined ? 'ALL' : param(range.limit);
    const sql = `SELECT key, key_json, doc_id, value FROM ${name} WHERE ${where} ORDER BY view ${order}, key ${order}, doc_id ${order}, n ${order} LIMIT ${limit} OFFSET ${param(range.skip)}`;
    const tables = tablesOf(name.slice('view_rows_'.length));
    const counted = async (): Promise<[number, number]> => {
      const totalRows = await run(this.#pool, totalRowsOf(tables, range.view));
      return [totalRows, range.countOffset === false ? 0 : await run(this.#pool, rowsBeforeStart(tables, range, totalRows))];
    };
    const [raw, [totalRows, rowsBefore]] = await Promise.all([this.#pool.query<{ key: Buffer; key_json: string; doc_id: string; value: string }>(sql, params), counted()]);
    return {
      totalRows,
      offset: rowsBefore + range.skip,
      rows: raw.rows.map((row) => ({ key: JSON.parse(row.key_json), id: row.doc_id, value: JSON.parse(row.value), encoded: row.key })),
    };
  }

  async aggregate(db: string, signature: string, range: ViewRange, grouped = false): Promise<ViewAggregate[]> {
    const index = await this.#index(db, signature);
    if (index === undefined) throw new Error(`no view index ${signature} in ${db}`);
    const name = table(index.index_id);
    const params: unknown[] = [];
    const param = (value: unknown): string => (params.push(value), `$${params.length}`);
    const where = rangeConditions(range, param);
    const order = range.descending ? 'DESC' : 'ASC';
    const tail = grouped ? ` GROUP BY key ORDER BY key ${order} LIMIT ${range.limit === undefined ? 'ALL' : param(range.limit)} OFFSET ${param(range.skip)}` : '';
    const sql = `SELECT ${aggregateColumns(grouped, (e) => `coalesce(sum(${e}), 0)`)} FROM ${name} WHERE ${where}${tail}`;
    return this.#aggregates.get(name, Number(index.update_seq), sql, params, async () => ((await this.#pool.query(sql, params)).rows as Record<string, unknown>[]).map(aggregateOf));
  }

  async reduce(db: string, signature: string, range: ViewRange, level: ReduceLevel): Promise<ViewAggregate[] | undefined> {
    const name = await this.#table(db, signature);
    return run(this.#pool, reduceGroups(tablesOf(name.slice('view_rows_'.length)), range, level));
  }

  async reductionPlan(db: string, signature: string, range: ViewRange, level: ReduceLevel, reducer: string): Promise<ReductionPiece[]> {
    const name = await this.#table(db, signature);
    return run(this.#pool, reductionPlan(tablesOf(name.slice('view_rows_'.length)), range, level, reducer));
  }

  /** Read in one snapshot, so that each block's rows are those of its version. */
  async staleBlocks(db: string, signature: string, view: number, reducer: string, most: number, after?: RowPosition): Promise<StaleBlock[]> {
    const name = await this.#table(db, signature);
    return inTransaction(this.#pool, async (client) => {
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
      return run(client, staleBlocks(tablesOf(name.slice('view_rows_'.length)), view, reducer, most, after));
    });
  }

  async storeReductions(db: string, signature: string, view: number, reducer: string, reductions: readonly BlockReduction[]): Promise<void> {
    const name = await this.#table(db, signature);
    await inTransaction(this.#pool, (client) => run(client, storeReductions(tablesOf(name.slice('view_rows_'.length)), view, reducer, reductions)));
  }

  async keptAnswer(db: string, signature: string, view: number, reducer: string): Promise<KeptAnswer | undefined> {
    const name = await this.#table(db, signature);
    return run(this.#pool, keptAnswer(tablesOf(name.slice('view_rows_'.length)), view, reducer));
  }

  async keepAnswer(db: string, signature: string, view: number, reducer: string, reduction: KeptAnswer): Promise<void> {
    const name = await this.#table(db, signature);
    await run(this.#pool, keepAnswer(tablesOf(name.slice('view_rows_'.length)), view, reducer, reduction));
  }

  /**
   * `file`: the relations of the index's tables with their indexes and TOAST data
   * (`pg_total_relation_size`); `active`: the stored size of the columns of their live rows
   * (`pg_column_size`, compressed where PostgreSQL compressed them); `external`: the keys' and
   * values' JSON.
   */
  async sizes(db: string, signature: string): Promise<ViewIndexSizes | undefined> {
    const index = await this.#index(db, signature);
    if (index === undefined) return undefined;
    const { rows, partials } = tablesOf(index.index_id);
    const column = (names: string[]): string => names.map((name) => `coalesce(pg_column_size(${name}), 0)`).join(' + ');
    const { rows: [found] } = await this.#pool.query<{ file: string; active: string; external: string }>(
      `SELECT coalesce(pg_total_relation_size(to_regclass($1)), 0) + coalesce(pg_total_relation_size(to_regclass($2)), 0) AS file,
         (SELECT coalesce(sum(${column(['view', 'key', 'doc_id', 'n', 'key_json', 'value', 'num'])}), 0) FROM ${rows})
         + (SELECT coalesce(sum(${column(['view', 'level', 'gkey', 'key_json', 'depth', 'row_count', 'num_count', 'num_sum', 'num_sumsqr', 'num_min', 'num_max', 'key_count'])}), 0) FROM ${partials}) AS active,
         (SELECT coalesce(sum(octet_length(key_json) + octet_length(value)), 0) FROM ${rows}) AS external`,
      [rows, partials],
    );
    return { file: Number(found!.file), active: Number(found!.active), external: Number(found!.external) };
  }

  async list(db: string): Promise<ViewIndexInfo[]> {
    const { rows } = await this.#pool.query<IndexRow>(
      `SELECT v.index_id, v.signature, v.update_seq FROM view_indexes v JOIN databases d ON d.db_id = v.db_id WHERE d.name = $1 ORDER BY v.signature`,
      [db],
    );
    return Promise.all(
      rows.map(async (index) => {
        const { rows: counted } = await this.#pool.query<{ c: string }>(`SELECT coalesce(sum(row_count), 0) AS c FROM ${tablesOf(index.index_id).partials} WHERE level = 0`);
        return { signature: index.signature, updateSeq: Number(index.update_seq), rows: Number(counted[0]!.c) };
      }),
    );
  }

  async drop(db: string, signatures: readonly string[]): Promise<number> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ index_id: string }>(
        `DELETE FROM view_indexes v USING databases d WHERE d.db_id = v.db_id AND d.name = $1 AND v.signature = ANY($2::text[]) RETURNING v.index_id`,
        [db, signatures],
      );
      for (const row of rows) await client.query(dropViewTables(row.index_id));
      return rows.length;
    });
  }

  async exclusive<T>(db: string, signature: string, work: () => Promise<T>): Promise<T> {
    return withIndexLock(this.#pool, VIEW_LOCK_CLASS, JSON.stringify([this.#schema, db, signature]), work);
  }
}
