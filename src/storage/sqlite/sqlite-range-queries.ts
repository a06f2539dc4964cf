import type { ChangeRow, ChangesOptions, IdRangeStats, RangeOptions, RangeResult } from '../storage.js';
import { changeRow, documentSummary, storedSizeColumns, type DatabaseRow } from '../kit/stored-rows.js';
import type { Connection, Statement } from './sqlite-connection.js';
import { idRangeConditions } from '../kit/id-range.js';
import { StatementCache } from './sqlite-statement-cache.js';
import { liveBelow, type IdBlockStatements } from './sqlite-id-blocks.js';

/** `_all_docs` and `_changes` build their SQL from options; each distinct shape is prepared once. */
export class RangeQueries {
  readonly #cache: StatementCache;
  readonly #idBlocks: IdBlockStatements;

  constructor(db: Connection, idBlocks: IdBlockStatements) {
    this.#cache = new StatementCache(db);
    this.#idBlocks = idBlocks;
  }

  #statement(sql: string, pluck = false): Statement {
    return this.#cache.get(sql, pluck);
  }

  /** Live documents in the range, counting no further than `most`. */
  #countLive(bounds: string, params: unknown[], most: number): number {
    const sql = `SELECT count(*) FROM (SELECT 1 FROM documents d WHERE d.db_id = ? AND d.deleted = 0${bounds} LIMIT ?)`;
    return this.#statement(sql, true).get(...params, most) as number;
  }


  /** The `databases` row of `name` with the byte counts of its stored sizes (kit/stored-rows.ts). */
  databaseWithSizes(name: string): DatabaseRow | undefined {
    const sql = `SELECT t.*, ${storedSizeColumns((column) => `length(CAST(${column} AS BLOB))`, 'v.leaf = 1')} FROM databases t WHERE t.name = ?`;
    return this.#statement(sql).get(name) as DatabaseRow | undefined;
  }

  /** Counts and leaf sizes of the documents with ids in [start, end): an index range, whatever the rest of the database holds. */
  idRangeStats(dbId: number, start: string, end: string): IdRangeStats {
    const sql = `SELECT coalesce(sum(d.deleted = 0), 0) AS live, coalesce(sum(d.deleted), 0) AS dead,
        coalesce((SELECT sum(length(CAST(b.body AS BLOB))) FROM revision_bodies b
          JOIN documents e ON b.doc_pk = e.doc_pk AND b.leaf = 1 WHERE e.db_id = ? AND e.id >= ? AND e.id < ?), 0) AS size
      FROM documents d WHERE d.db_id = ? AND d.id >= ? AND d.id < ?`;
    const row = this.#statement(sql).get(dbId, start, end, dbId, start, end) as { live: number; dead: number; size: number };
    return { docCount: row.live, deletedDocCount: row.dead, dataSize: row.size };
  }

  /**
   * Live documents in id byte order (SQLite's BINARY collation). With `descending` the start key
   * is the upper bound, as in CouchDB; `offset` counts the rows before the first one returned.
   */
  listDocuments(dbId: number, totalRows: number, options: RangeOptions): RangeResult {
    const descending = options.descending === true;
    const skip = Math.max(0, options.skip ?? 0);
    const { sql: bounds, params } = rangeBounds(options);
    const withDocs = options.includeDocs === true;
    const sql =
      `SELECT d.id, d.winner, d.seq${withDocs ? ', b.body' : ''} FROM documents d` +
      (withDocs ? ' LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner' : '') +
      ` WHERE d.db_id = ? AND d.deleted = 0${bounds}` +
      ` ORDER BY d.id ${descending ? 'DESC' : 'ASC'} LIMIT ? OFFSET ?`;
    const raw = this.#statement(sql).all(dbId, ...params, options.limit ?? -1, skip) as {
      id: string;
      winner: string;
      seq: number;
      body?: string | null;
    }[];
    const rows = raw.map((r) => documentSummary({ ...r, deleted: false }, r.body));

    if (options.countOffset === false) return { totalRows, offset: skip, rows };
    // The live documents before the start key, from the counted id blocks (sqlite-id-blocks.ts).
    const start = options.startKey;
    const before = start === undefined ? 0 : descending ? Math.max(0, totalRows - liveBelow(this.#idBlocks, dbId, start, true)) : liveBelow(this.#idBlocks, dbId, start, false);
    let offset = before + skip;
    if (rows.length === 0 && skip > 0) {
      // Skipped past the end of the range: the first row would have come right after it.
      offset = before + this.#countLive(bounds, [dbId, ...params], skip);
    }
    return { totalRows, offset, rows };
  }

  /** One row per document at its latest sequence; `since` is exclusive. */
  changes(dbId: number, options: ChangesOptions): ChangeRow[] {
    const withDocs = options.includeDocs === true;
    const allLeaves = options.allLeaves === true;
    const conflicts = options.conflicts === true;
    const withTree = allLeaves || conflicts;
    const ids = options.ids;
    const sql =
      `SELECT d.id, d.winner, d.deleted, d.seq${withTree ? ', d.tree' : ''}${withDocs ? ', b.body' : ''}` +
      ' FROM documents d' +
      (withDocs ? ' LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner' : '') +
      ` WHERE d.db_id = ? AND d.seq > ?${ids === undefined ? '' : ' AND d.id IN (SELECT value FROM json_each(?))'}` +
      ` ORDER BY d.seq ${options.descending === true ? 'DESC' : 'ASC'} LIMIT ?`;
    const params: unknown[] = [dbId, options.since ?? 0];
    if (ids !== undefined) params.push(JSON.stringify(ids));
    params.push(options.limit ?? -1);
    const raw = this.#statement(sql).all(...params) as {
      id: string;
      winner: string;
      deleted: 0 | 1;
      seq: number;
      tree?: string;
      body?: string | null;
    }[];
    return raw.map((r) => changeRow({ ...r, deleted: r.deleted === 1 }, { allLeaves, conflicts, bodyText: options.bodyText }));
  }
}

/** SQL conditions on `d.id` for a key range, and their parameters. */
function rangeBounds(options: RangeOptions): { sql: string; params: string[] } {
  const params: string[] = [];
  return { sql: idRangeConditions('d', options, (value) => (params.push(value), '?')), params };
}
