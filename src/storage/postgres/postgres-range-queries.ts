/**
 * `_all_docs` and `_changes` of the PostgreSQL backend: SQL built from the options, one statement
 * each that starts from the database row, so "no row at all" means the database does not exist.
 */
import { databaseMissing } from '../../errors/catalog.js';
import type { ChangeRow, ChangesOptions, IdRangeStats, RangeOptions, RangeResult } from '../storage.js';
import { changeRow, documentSummary } from '../kit/stored-rows.js';
import type { Queryable } from './postgres-queries.js';
import { idRangeConditions } from '../kit/id-range.js';

/** LIMIT value: null (no limit) for absent or negative limits, as SQLite's LIMIT -1. */
function limitOf(limit: number | undefined): number | null {
  return limit === undefined || limit < 0 ? null : Math.floor(limit);
}

/** Appends `value` to `params` and returns its placeholder. */
function param(params: unknown[], value: unknown): string {
  params.push(value);
  return `$${params.length}`;
}

/** Conditions on `<alias>.id` for a key range (kit/id-range.ts), their values appended to `params`. */
function rangeBounds(alias: string, options: RangeOptions, params: unknown[]): string {
  return idRangeConditions(alias, options, (value) => `${param(params, value)}::text`);
}

/**
 * Live documents whose id is below the key (`<`) or at most the key (`<=`): the stored counts of
 * the id blocks before the key's block (postgres-id-blocks.ts), plus a count inside that block.
 */
function countBelow(dbId: string, key: string, op: '<' | '<='): string {
  return `(SELECT (coalesce((SELECT sum(live) FROM id_blocks WHERE db_id = ${dbId} AND first_id < b.f), 0)
      + (SELECT count(*) FROM documents c WHERE c.db_id = ${dbId} AND NOT c.deleted AND c.id >= b.f AND c.id ${op} ${key}::text))::int8
    FROM (SELECT coalesce((SELECT max(first_id) FROM id_blocks WHERE db_id = ${dbId} AND first_id <= ${key}::text), '') AS f) b)`;
}

/**
 * Live documents in id byte order. With `descending` the start key is the upper bound, as in
 * CouchDB; `offset` counts the rows before the first one returned.
 */
/** Counts and leaf sizes of the documents with ids in [start, end): an index range, whatever the rest of the database holds. */
export async function idRangeStats(db: Queryable, name: string, start: string, end: string): Promise<IdRangeStats> {
  const { rows } = await db.query<{ live: string; dead: string; size: string }>(
    `SELECT (SELECT count(*) FILTER (WHERE NOT d.deleted) FROM documents d WHERE d.db_id = t.db_id AND d.id >= $2 AND d.id < $3) AS live,
       (SELECT count(*) FILTER (WHERE d.deleted) FROM documents d WHERE d.db_id = t.db_id AND d.id >= $2 AND d.id < $3) AS dead,
       (SELECT coalesce(sum(octet_length(b.body)), 0) FROM documents d JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.leaf
         WHERE d.db_id = t.db_id AND d.id >= $2 AND d.id < $3) AS size
     FROM databases t WHERE t.name = $1`,
    [name, start, end],
  );
  if (rows.length === 0) throw databaseMissing();
  return { docCount: Number(rows[0]!.live), deletedDocCount: Number(rows[0]!.dead), dataSize: Number(rows[0]!.size) };
}

export async function listDocuments(db: Queryable, name: string, options: RangeOptions): Promise<RangeResult> {
  const descending = options.descending === true;
  const direction = descending ? 'DESC' : 'ASC';
  const skip = Math.max(0, Math.floor(options.skip ?? 0));
  const withDocs = options.includeDocs === true;
  const params: unknown[] = [name];
  const dbId = '(SELECT db_id FROM target)';

  const before =
    options.startKey === undefined || options.countOffset === false
      ? '0::int8'
      : descending
        ? `(SELECT doc_count FROM target) - ${countBelow(dbId, param(params, options.startKey), '<=')}`
        : countBelow(dbId, param(params, options.startKey), '<');
  // Only needed to place the offset when the skip goes past the end of the range.
  const inRange =
    skip === 0 || options.countOffset === false
      ? '0::int8'
      : `(SELECT count(*) FROM (SELECT 1 FROM documents c WHERE c.db_id = ${dbId} AND NOT c.deleted
          ${rangeBounds('c', options, params)} LIMIT ${param(params, skip)}) AS counted)`;
  const bounds = rangeBounds('d', options, params);
  const limit = param(params, limitOf(options.limit));
  const offset = param(params, skip);
  const sql = `WITH target AS (SELECT db_id, doc_count FROM databases WHERE name = $1)
    SELECT t.doc_count, ${before} AS before, ${inRange} AS in_range, r.id, r.winner, r.seq, r.body
    FROM target t
    LEFT JOIN LATERAL (
      SELECT d.id, d.winner, d.seq, ${withDocs ? 'b.body' : 'NULL::text AS body'}
      FROM documents d
      ${withDocs ? 'LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner' : ''}
      WHERE d.db_id = t.db_id AND NOT d.deleted${bounds}
      ORDER BY d.id ${direction} LIMIT ${limit}::int8 OFFSET ${offset}::int8
    ) r ON true
    ORDER BY r.id ${direction}`;
  const { rows } = await db.query<{
    doc_count: number;
    before: number;
    in_range: number;
    id: string | null;
    winner: string;
    seq: number;
    body: string | null;
  }>(sql, params);
  if (rows.length === 0) throw databaseMissing();
  const result = rows
    .filter((r) => r.id !== null)
    .map((r) => documentSummary({ ...r, id: r.id as string, deleted: false }, r.body));
  const { doc_count: totalRows, before: rowsBefore, in_range: available } = rows[0];
  // Skipped past the end of the range: the first row would have come right after it.
  const offsetValue = result.length === 0 && skip > 0 ? rowsBefore + Math.min(skip, available) : rowsBefore + skip;
  return { totalRows, offset: offsetValue, rows: result };
}

/** One row per document at its latest sequence; `since` is exclusive. */
export async function changes(db: Queryable, name: string, options: ChangesOptions): Promise<ChangeRow[]> {
  const withDocs = options.includeDocs === true;
  const allLeaves = options.allLeaves === true;
  const conflicts = options.conflicts === true;
  const withTree = allLeaves || conflicts;
  const direction = options.descending === true ? 'DESC' : 'ASC';
  const params: unknown[] = [name, options.since ?? 0, limitOf(options.limit)];
  const idFilter = options.ids === undefined ? '' : ` AND d.id = ANY(${param(params, [...options.ids])}::text[])`;
  const { rows } = await db.query<{
    id: string | null;
    winner: string;
    deleted: boolean;
    seq: number;
    tree: string | null;
    body: string | null;
  }>(
    `SELECT r.id, r.winner, r.deleted, r.seq, r.tree, r.body
     FROM databases x
     LEFT JOIN LATERAL (
       SELECT d.id, d.winner, d.deleted, d.seq, ${withTree ? 'd.tree' : 'NULL::text AS tree'},
         ${withDocs ? 'b.body' : 'NULL::text AS body'}
       FROM documents d
       ${withDocs ? 'LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner' : ''}
       WHERE d.db_id = x.db_id AND d.seq > $2${idFilter}
       ORDER BY d.seq ${direction} LIMIT $3::int8
     ) r ON true
     WHERE x.name = $1
     ORDER BY r.seq ${direction}`,
    params,
  );
  if (rows.length === 0) throw databaseMissing();
  return rows
    .filter((r) => r.id !== null)
    .map((r) => changeRow({ ...r, id: r.id as string }, { allLeaves, conflicts, bodyText: options.bodyText }));
}
