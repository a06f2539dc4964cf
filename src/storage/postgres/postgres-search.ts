/**
 * The PostgreSQL search store (search-store.ts): a `search_indexes` catalog row (postgres-schema.ts) per (database,
 * signature) and per index `search_docs_{id}`, `search_values_{id}` (string, double and stored
 * values; text COLLATE "C", so strings sort by bytes as on SQLite), `search_fields_{id}` and
 * `search_text_{id}`: one tsvector per text value, analysed with the text search configuration
 * its Nouveau analyzer maps to (docs/search.md), under a GIN index. Relevance is `ts_rank`. Nodes
 * sharing the schema share the indexes; one node at a time updates one (an advisory lock).
 */
import type pg from 'pg';
import type { SearchAnswer, SearchDocument, SearchFieldType, SearchIndexInfo, SearchRequest, SearchStore } from '../search-store.js';
import { searchAnswer } from '../kit/search-answer.js';
import type { Param, SearchDialect } from '../kit/search-sql.js';
import { inTransaction } from './postgres-connection.js';
import { withIndexLock } from './postgres-index-lock.js';

/** Advisory-lock classes: index updates ('SRCH') and index creation ('SNEW'). */
const UPDATE_LOCK_CLASS = 0x53524348;
const CREATE_LOCK_CLASS = 0x534e4557;

const tableNames = (id: string | number) => ({ docs: `search_docs_${id}`, values: `search_values_${id}`, fields: `search_fields_${id}`, text: `search_text_${id}` });

/** The statement that drops one search index's tables. */
export const dropSearchTables = (id: string | number): string => `DROP TABLE IF EXISTS ${Object.values(tableNames(id)).join(', ')}`;

/** `?` placeholders numbered as PostgreSQL wants them. */
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

interface IndexRow {
  index_id: string;
  signature: string;
  update_seq: string;
}

export class PostgresSearchStore implements SearchStore {
  readonly textSyntax = 'tsquery';
  readonly #pool: pg.Pool;
  readonly #schema: string;
  /** The text search configurations this server has (`pg_ts_config`), read once. */
  #configs: Promise<Set<string>> | undefined;

  constructor(pool: pg.Pool, schema: string) {
    this.#pool = pool;
    this.#schema = schema;
  }

  /** The configuration of a Nouveau analyzer: a language's own where PostgreSQL has it, else `simple`. */
  async #configOf(analyzer: string): Promise<string> {
    this.#configs ??= this.#pool.query<{ cfgname: string }>('SELECT cfgname FROM pg_ts_config').then(({ rows }) => new Set(rows.map((row) => row.cfgname)));
    const language = analyzer === 'portugese' ? 'portuguese' : analyzer;
    return (await this.#configs).has(language) ? language : 'simple';
  }

  #dialect(id: string): SearchDialect {
    const t = tableNames(id);
    return {
      docs: t.docs,
      fieldValues: t.values,
      text: (leaf, param: Param) =>
        `SELECT doc_id, CAST(sum(ts_rank(tsv, q)) AS DOUBLE PRECISION) AS score FROM ${t.text}, to_tsquery(CAST(${param(leaf.analyzer)} AS regconfig), ${param(leaf.match)}) AS q` +
        ` WHERE field = ${param(leaf.field)} AND tsv @@ q GROUP BY doc_id`,
      wildcard: (pattern, param) => `str LIKE ${param(pattern.replace(/[\\%_]/g, (c) => `\\${c}`).replaceAll('*', '%').replaceAll('?', '_'))}`,
    };
  }

  async #index(db: string, signature: string): Promise<IndexRow | undefined> {
    const { rows } = await this.#pool.query<IndexRow>(
      `SELECT s.index_id, s.signature, s.update_seq FROM search_indexes s JOIN databases d ON d.db_id = s.db_id WHERE d.name = $1 AND s.signature = $2`,
      [db, signature],
    );
    return rows[0];
  }

  async #existing(db: string, signature: string): Promise<IndexRow> {
    const index = await this.#index(db, signature);
    if (index === undefined) throw new Error(`no search index ${signature} in ${db}`);
    return index;
  }

  async open(db: string, signature: string): Promise<number> {
    const known = await this.#index(db, signature);
    if (known !== undefined) return Number(known.update_seq);
    return inTransaction(this.#pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1::int4, hashtext($2))', [CREATE_LOCK_CLASS, this.#schema]);
      const { rows } = await client.query<{ index_id: string; update_seq: string; created: boolean }>(
        `INSERT INTO search_indexes (db_id, signature) SELECT db_id, $2 FROM databases WHERE name = $1
         ON CONFLICT (db_id, signature) DO UPDATE SET signature = EXCLUDED.signature RETURNING index_id, update_seq, (xmax = 0) AS created`,
        [db, signature],
      );
      const row = rows[0];
      if (row === undefined) throw new Error(`no database ${db}`);
      if (!row.created) return Number(row.update_seq);
      const t = tableNames(row.index_id);
      await client.query(dropSearchTables(row.index_id));
      await client.query(`CREATE TABLE ${t.docs} (doc_id text COLLATE "C" PRIMARY KEY)`);
      await client.query(
        `CREATE TABLE ${t.values} (doc_id text COLLATE "C" NOT NULL, n integer NOT NULL, field text NOT NULL, type text NOT NULL,
           str text COLLATE "C", num double precision, stored integer NOT NULL, PRIMARY KEY (doc_id, n))`,
      );
      await client.query(`CREATE INDEX ${t.values}_str ON ${t.values} (field, str)`);
      await client.query(`CREATE INDEX ${t.values}_num ON ${t.values} (field, num)`);
      await client.query(`CREATE TABLE ${t.fields} (field text PRIMARY KEY, type text NOT NULL)`);
      await client.query(`CREATE TABLE ${t.text} (doc_id text COLLATE "C" NOT NULL, field text NOT NULL, tsv tsvector NOT NULL)`);
      await client.query(`CREATE INDEX ${t.text}_docs ON ${t.text} (doc_id)`);
      await client.query(`CREATE INDEX ${t.text}_tsv ON ${t.text} USING gin (tsv)`);
      return 0;
    });
  }

  async update(db: string, signature: string, documents: readonly SearchDocument[], updateSeq: number): Promise<void> {
    const { index_id: id } = await this.#existing(db, signature);
    const t = tableNames(id);
    const ids = documents.map((document) => document.id);
    const values: unknown[][] = [[], [], [], [], [], [], []];
    const texts: unknown[][] = [[], [], [], []];
    const fields = new Map<string, SearchFieldType>();
    for (const document of documents) {
      for (const [n, field] of document.fields.entries()) {
        if (!fields.has(field.name)) fields.set(field.name, field.type);
        if (field.type === 'text') [document.id, field.name, await this.#configOf(field.analyzer ?? 'standard'), String(field.value)].forEach((value, i) => texts[i]!.push(value));
        if (field.type === 'text' && !field.store) continue;
        const num = typeof field.value === 'number' ? field.value : null;
        [document.id, n, field.name, field.type, num === null ? field.value : null, num, field.store ? 1 : 0].forEach((value, i) => values[i]!.push(value));
      }
    }
    await inTransaction(this.#pool, async (client) => {
      for (const table of [t.docs, t.values, t.text]) await client.query(`DELETE FROM ${table} WHERE doc_id = ANY($1::text[])`, [ids]);
      await client.query(`INSERT INTO ${t.docs} (doc_id) SELECT * FROM unnest($1::text[])`, [documents.filter((document) => document.fields.length > 0).map((document) => document.id)]);
      await client.query(`INSERT INTO ${t.values} (doc_id, n, field, type, str, num, stored) SELECT * FROM unnest($1::text[], $2::int4[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::int4[])`, values);
      await client.query(`INSERT INTO ${t.text} (doc_id, field, tsv) SELECT d, f, to_tsvector(c::regconfig, b) FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS x(d, f, c, b)`, texts);
      await client.query(`INSERT INTO ${t.fields} (field, type) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING`, [[...fields.keys()], [...fields.values()]]);
      await client.query('UPDATE search_indexes SET update_seq = $2 WHERE index_id = $1', [id, updateSeq]);
    });
  }

  async fieldTypes(db: string, signature: string): Promise<Map<string, SearchFieldType>> {
    const { index_id: id } = await this.#existing(db, signature);
    const { rows } = await this.#pool.query<{ field: string; type: SearchFieldType }>(`SELECT field, type FROM ${tableNames(id).fields}`);
    return new Map(rows.map((row) => [row.field, row.type]));
  }

  async search(db: string, signature: string, request: SearchRequest): Promise<SearchAnswer> {
    const { index_id: id } = await this.#existing(db, signature);
    const configured = await this.#configured(request.plan);
    return searchAnswer(this.#dialect(id), { ...request, plan: configured }, async (sql, params) => (await this.#pool.query(numbered(sql), params)).rows as Record<string, unknown>[]);
  }

  /** The plan with each text leaf's analyzer replaced by its text search configuration. */
  async #configured(plan: SearchRequest['plan']): Promise<SearchRequest['plan']> {
    switch (plan.kind) {
      case 'text':
        return { ...plan, analyzer: await this.#configOf(plan.analyzer) };
      case 'and':
      case 'or':
        return { kind: plan.kind, parts: await Promise.all(plan.parts.map((part) => this.#configured(part))) };
      case 'not':
        return { kind: 'not', positive: await this.#configured(plan.positive), negative: await this.#configured(plan.negative) };
      default:
        return plan;
    }
  }

  async vocabulary(db: string, signature: string, field: string, type: 'text' | 'string'): Promise<string[]> {
    const t = tableNames((await this.#existing(db, signature)).index_id);
    const sql =
      type === 'string'
        ? `SELECT DISTINCT str AS term FROM ${t.values} WHERE field = $1 AND type = 'string'`
        : `SELECT word AS term FROM ts_stat(format('SELECT tsv FROM ${t.text} WHERE field = %L', $1::text))`;
    const { rows } = await this.#pool.query<{ term: string }>(sql, [field]);
    return rows.map((row) => row.term);
  }

  /** The lexemes of `text` under the analyzer's text search configuration, in order (stop words left out). */
  async analyze(analyzer: string, text: string): Promise<string[]> {
    const { rows } = await this.#pool.query<{ lexeme: string }>(
      'SELECT lexemes[1] AS lexeme FROM ts_debug($1::regconfig, $2) WHERE cardinality(lexemes) > 0',
      [await this.#configOf(analyzer), text],
    );
    return rows.map((row) => row.lexeme);
  }

  async list(db: string): Promise<SearchIndexInfo[]> {
    const { rows } = await this.#pool.query<IndexRow>(
      'SELECT s.index_id, s.signature, s.update_seq FROM search_indexes s JOIN databases d ON d.db_id = s.db_id WHERE d.name = $1 ORDER BY s.signature',
      [db],
    );
    return Promise.all(
      rows.map(async (index) => {
        const { rows: counted } = await this.#pool.query<{ c: string }>(`SELECT count(*) AS c FROM ${tableNames(index.index_id).docs}`);
        return { signature: index.signature, updateSeq: Number(index.update_seq), docs: Number(counted[0]!.c) };
      }),
    );
  }

  async drop(db: string, signatures: readonly string[]): Promise<number> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ index_id: string }>(
        'DELETE FROM search_indexes s USING databases d WHERE d.db_id = s.db_id AND d.name = $1 AND s.signature = ANY($2::text[]) RETURNING s.index_id',
        [db, signatures],
      );
      for (const row of rows) await client.query(dropSearchTables(row.index_id));
      return rows.length;
    });
  }

  async exclusive<T>(db: string, signature: string, work: () => Promise<T>): Promise<T> {
    return withIndexLock(this.#pool, UPDATE_LOCK_CLASS, JSON.stringify([this.#schema, db, signature]), work);
  }
}
