/**
 * The per-principal orders of the PostgreSQL backend (`access_rows`, see access-store.ts): one
 * statement per answer (one snapshot), starting from the caller's rows and joining their documents.
 * No row at all means the database does not exist.
 */
import { databaseMissing } from '../../errors/catalog.js';
import type { AccessStats, AccessStore } from '../access-store.js';
import type { ChangeRow, ChangesOptions, RangeOptions, RangeResult } from '../storage.js';
import { changeRow, documentSummary } from '../kit/stored-rows.js';
import type { Queryable } from './postgres-queries.js';
import { idRangeConditions } from '../kit/id-range.js';

/** Appends `value` to `params` and returns its placeholder. */
function param(params: unknown[], value: unknown): string {
  params.push(value);
  return `$${params.length}`;
}

/** Conditions on `<alias>.id` for a key range (kit/id-range.ts), their values appended to `params`. */
function rangeBounds(alias: string, options: RangeOptions, params: unknown[]): string {
  return idRangeConditions(alias, options, (value) => `${param(params, value)}::text`);
}

const TARGET = 'WITH target AS (SELECT db_id FROM databases WHERE name = $1)';
/** The caller's rows of the target database: principals bound as $2. */
const MINE = 'a.db_id = (SELECT db_id FROM target) AND a.principal = ANY($2::text[])';

export class PostgresAccessStore implements AccessStore {
  readonly #pool: Queryable;
  readonly #checkOpen: () => void;

  constructor(pool: Queryable, checkOpen: () => void) {
    this.#pool = pool;
    this.#checkOpen = checkOpen;
  }

  async listDocuments(db: string, principals: readonly string[], options: RangeOptions): Promise<RangeResult> {
    this.#checkOpen();
    const direction = options.descending === true ? 'DESC' : 'ASC';
    const skip = Math.max(0, Math.floor(options.skip ?? 0));
    const withDocs = options.includeDocs === true;
    const params: unknown[] = [db, principals];
    const before = options.startKey === undefined ? '0' : `(SELECT count(*) FROM mine m WHERE m.id ${direction === 'DESC' ? '>' : '<'} ${param(params, options.startKey)}::text)`;
    const inRange = `(SELECT count(*) FROM mine m WHERE true${rangeBounds('m', options, params)})`;
    const bounds = rangeBounds('m', options, params);
    const limit = param(params, options.limit === undefined || options.limit < 0 ? null : Math.floor(options.limit));
    const offset = param(params, skip);
    const sql = `${TARGET}, mine AS (SELECT DISTINCT a.id FROM access_rows a WHERE ${MINE} AND NOT a.deleted)
      SELECT (SELECT count(*) FROM mine)::int8 AS total, ${before}::int8 AS before, ${inRange}::int8 AS in_range, r.id, r.winner, r.seq, r.body
      FROM target t LEFT JOIN LATERAL (
        SELECT d.id, d.winner, d.seq, ${withDocs ? 'b.body' : 'NULL::text AS body'}
        FROM (SELECT m.id FROM mine m WHERE true${bounds} ORDER BY m.id ${direction} LIMIT ${limit}::int8 OFFSET ${offset}::int8) u
        JOIN documents d ON d.db_id = t.db_id AND d.id = u.id
        ${withDocs ? 'LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner' : ''}
      ) r ON true ORDER BY r.id ${direction}`;
    const { rows } = await this.#pool.query<{ total: string; before: string; in_range: string; id: string | null; winner: string; seq: string; body: string | null }>(sql, params);
    if (rows.length === 0) throw databaseMissing();
    const first = rows[0]!;
    const found = rows.filter((row) => row.id !== null).map((row) => documentSummary({ id: row.id!, winner: row.winner, seq: Number(row.seq), deleted: false }, row.body));
    const totalRows = Number(first.total);
    if (options.countOffset === false) return { totalRows, offset: skip, rows: found };
    const start = Number(first.before);
    const offsetRows = found.length === 0 && skip > 0 ? start + Math.min(skip, Number(first.in_range)) : start + skip;
    return { totalRows, offset: offsetRows, rows: found };
  }

  async changes(db: string, principals: readonly string[], options: ChangesOptions): Promise<ChangeRow[]> {
    this.#checkOpen();
    const withDocs = options.includeDocs === true;
    const allLeaves = options.allLeaves === true;
    const conflicts = options.conflicts === true;
    const direction = options.descending === true ? 'DESC' : 'ASC';
    const params: unknown[] = [db, principals, options.since ?? 0];
    const ids = options.ids === undefined ? '' : ` AND a.id = ANY(${param(params, options.ids)}::text[])`;
    const limit = param(params, options.limit === undefined || options.limit < 0 ? null : Math.floor(options.limit));
    const sql = `${TARGET}
      SELECT t.db_id AS present, r.* FROM target t LEFT JOIN LATERAL (
        SELECT d.id, d.winner, d.deleted, d.seq, ${allLeaves || conflicts ? 'd.tree' : 'NULL::text AS tree'}, ${withDocs ? 'b.body' : 'NULL::text AS body'}
        FROM (SELECT DISTINCT a.seq, a.id FROM access_rows a WHERE ${MINE} AND a.seq > $3::int8${ids} ORDER BY a.seq ${direction} LIMIT ${limit}::int8) u
        JOIN documents d ON d.db_id = t.db_id AND d.id = u.id
        ${withDocs ? 'LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner' : ''}
      ) r ON true ORDER BY r.seq ${direction}`;
    const { rows } = await this.#pool.query<{ id: string | null; winner: string; deleted: boolean; seq: string; tree: string | null; body: string | null }>(sql, params);
    if (rows.length === 0) throw databaseMissing();
    return rows.filter((row) => row.id !== null).map((row) => changeRow({ ...row, id: row.id!, seq: Number(row.seq) }, { allLeaves, conflicts }));
  }

  async stats(db: string, principals: readonly string[], after: number): Promise<AccessStats> {
    this.#checkOpen();
    const { rows } = await this.#pool.query<{ live: string; dead: string; seq: string; pending: string }>(
      // One pass over the caller's rows; no group (no row) when the database does not exist.
      `SELECT count(DISTINCT a.id) FILTER (WHERE NOT a.deleted) AS live, count(DISTINCT a.id) FILTER (WHERE a.deleted) AS dead,
        coalesce(max(a.seq), 0) AS seq, count(DISTINCT a.id) FILTER (WHERE a.seq > $3::int8) AS pending
      FROM databases t LEFT JOIN access_rows a ON a.db_id = t.db_id AND a.principal = ANY($2::text[])
      WHERE t.name = $1 GROUP BY t.db_id`,
      [db, principals, after],
    );
    if (rows.length === 0) throw databaseMissing();
    const row = rows[0]!;
    return { docCount: Number(row.live), deletedDocCount: Number(row.dead), updateSeq: Number(row.seq), pendingAfter: Number(row.pending) };
  }
}
