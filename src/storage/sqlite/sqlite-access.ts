/**
 * The per-principal orders of the SQLite backend (`access_rows`, see access-store.ts): each listing
 * starts from the caller's rows (one index range per principal) and joins their documents, so it
 * reads the caller's documents only. Synchronous reads, run between two write batches: one snapshot.
 */
import type { AccessStats, AccessStore } from '../access-store.js';
import type { ChangeRow, ChangesOptions, RangeOptions, RangeResult } from '../storage.js';
import { changeRow, documentSummary } from '../kit/stored-rows.js';
import type { Connection, Statement } from './sqlite-connection.js';
import { idRangeConditions } from '../kit/id-range.js';
import { StatementCache } from './sqlite-statement-cache.js';

/** The caller's rows: `a.principal` one of the JSON array bound at this place. */
const MINE = 'a.db_id = ? AND a.principal IN (SELECT value FROM json_each(?))';

export class SqliteAccessStore implements AccessStore {
  readonly #read: <T>(query: (dbId: number) => T, db: string) => T;
  readonly #cache: StatementCache;

  /** `read` runs a query on the id of a database (404 when missing) after the freshness check. */
  constructor(db: Connection, read: <T>(query: (dbId: number) => T, db: string) => T) {
    this.#cache = new StatementCache(db);
    this.#read = read;
  }

  #statement(sql: string, pluck = false): Statement {
    return this.#cache.get(sql, pluck);
  }

  async listDocuments(db: string, principals: readonly string[], options: RangeOptions): Promise<RangeResult> {
    return this.#read((dbId) => {
      const mine = JSON.stringify(principals);
      const descending = options.descending === true;
      const skip = Math.max(0, options.skip ?? 0);
      const { sql: bounds, params } = rangeBounds(options);
      const withDocs = options.includeDocs === true;
      const sql =
        `SELECT d.id, d.winner, d.seq${withDocs ? ', b.body' : ''} FROM (SELECT DISTINCT a.id AS id FROM access_rows a` +
        ` WHERE ${MINE} AND a.deleted = 0${bounds} ORDER BY a.id ${descending ? 'DESC' : 'ASC'} LIMIT ? OFFSET ?) u` +
        ' CROSS JOIN documents d ON d.db_id = ? AND d.id = u.id' +
        (withDocs ? ' LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner' : '') +
        ` ORDER BY d.id ${descending ? 'DESC' : 'ASC'}`;
      const raw = this.#statement(sql).all(dbId, mine, ...params, options.limit ?? -1, skip, dbId) as { id: string; winner: string; seq: number; body?: string | null }[];
      const rows = raw.map((r) => documentSummary({ ...r, deleted: false }, r.body));
      const count = (extra: string, extraParams: string[]): number =>
        this.#statement(`SELECT count(DISTINCT a.id) FROM access_rows a WHERE ${MINE} AND a.deleted = 0${extra}`, true).get(dbId, mine, ...extraParams) as number;
      const totalRows = count('', []);
      if (options.countOffset === false) return { totalRows, offset: skip, rows };
      const before = options.startKey === undefined ? 0 : count(descending ? ' AND a.id > ?' : ' AND a.id < ?', [options.startKey]);
      // Skipped past the end of the range: the first row would have come right after it.
      const offset = rows.length === 0 && skip > 0 ? before + Math.min(skip, count(bounds, params)) : before + skip;
      return { totalRows, offset, rows };
    }, db);
  }

  async changes(db: string, principals: readonly string[], options: ChangesOptions): Promise<ChangeRow[]> {
    return this.#read((dbId) => {
      const withDocs = options.includeDocs === true;
      const allLeaves = options.allLeaves === true;
      const conflicts = options.conflicts === true;
      const order = options.descending === true ? 'DESC' : 'ASC';
      const ids = options.ids;
      const sql =
        `SELECT d.id, d.winner, d.deleted, d.seq${allLeaves || conflicts ? ', d.tree' : ''}${withDocs ? ', b.body' : ''}` +
        ` FROM (SELECT DISTINCT a.seq AS seq, a.id AS id FROM access_rows a WHERE ${MINE} AND a.seq > ?` +
        (ids === undefined ? '' : ' AND a.id IN (SELECT value FROM json_each(?))') +
        ` ORDER BY a.seq ${order} LIMIT ?) u CROSS JOIN documents d ON d.db_id = ? AND d.id = u.id` +
        (withDocs ? ' LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner' : '') +
        ` ORDER BY d.seq ${order}`;
      const params: unknown[] = [dbId, JSON.stringify(principals), options.since ?? 0];
      if (ids !== undefined) params.push(JSON.stringify(ids));
      params.push(options.limit ?? -1, dbId);
      const raw = this.#statement(sql).all(...params) as { id: string; winner: string; deleted: 0 | 1; seq: number; tree?: string; body?: string | null }[];
      return raw.map((r) => changeRow({ ...r, deleted: r.deleted === 1 }, { allLeaves, conflicts }));
    }, db);
  }

  async stats(db: string, principals: readonly string[], after: number): Promise<AccessStats> {
    return this.#read((dbId) => {
      const sql = `SELECT count(DISTINCT CASE WHEN a.deleted = 0 THEN a.id END) AS live, count(DISTINCT CASE WHEN a.deleted = 1 THEN a.id END) AS dead,
          coalesce(max(a.seq), 0) AS seq, count(DISTINCT CASE WHEN a.seq > ? THEN a.id END) AS pending
        FROM access_rows a WHERE ${MINE}`;
      const row = this.#statement(sql).get(after, dbId, JSON.stringify(principals)) as { live: number; dead: number; seq: number; pending: number };
      return { docCount: row.live, deletedDocCount: row.dead, updateSeq: row.seq, pendingAfter: row.pending };
    }, db);
  }
}

/** SQL conditions on `a.id` for a key range, and their parameters. */
function rangeBounds(options: RangeOptions): { sql: string; params: string[] } {
  const params: string[] = [];
  return { sql: idRangeConditions('a', options, (value) => (params.push(value), '?')), params };
}
