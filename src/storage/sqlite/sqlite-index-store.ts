/**
 * Mango index rows in SQLite (`mango_indexes`, `mango_index_rows`): keys are BLOBs, which SQLite
 * compares with memcmp, so the primary key (db, signature, key, id) is the index order itself.
 * Updates go through the write queue like every other write (one writer, group commit).
 */
import { indexedDocument, scanOperators, type IndexedDocument, type IndexScanRow, type IndexScan, type IndexStore, type IndexUpdate } from '../index-store.js';
import type { Connection, Statement } from './sqlite-connection.js';
import type { WriteQueue } from './sqlite-write-queue.js';


function prepare(db: Connection) {
  return {
    seq: db.prepare<[number, string], number>('SELECT indexed_seq FROM mango_indexes WHERE db_id = ? AND signature = ?').pluck(),
    setSeq: db.prepare<[number, string, number]>(
      'INSERT INTO mango_indexes (db_id, signature, indexed_seq) VALUES (?, ?, ?) ON CONFLICT (db_id, signature) DO UPDATE SET indexed_seq = excluded.indexed_seq',
    ),
    deleteRow: db.prepare<[number, string, string]>('DELETE FROM mango_index_rows WHERE db_id = ? AND signature = ? AND id = ?'),
    insertRow: db.prepare<[number, string, Buffer, string]>('INSERT INTO mango_index_rows (db_id, signature, key, id) VALUES (?, ?, ?, ?)'),
    dropRows: db.prepare<[number, string]>('DELETE FROM mango_index_rows WHERE db_id = ? AND signature = ?'),
    dropState: db.prepare<[number, string]>('DELETE FROM mango_indexes WHERE db_id = ? AND signature = ?'),
  };
}

export class SqliteIndexStore implements IndexStore {
  readonly #db: Connection;
  readonly #queue: WriteQueue;
  readonly #databaseId: (name: string) => number;
  readonly #st: ReturnType<typeof prepare>;
  readonly #scans = new Map<string, Statement>();

  constructor(db: Connection, queue: WriteQueue, databaseId: (name: string) => number) {
    this.#db = db;
    this.#queue = queue;
    this.#databaseId = databaseId;
    this.#st = prepare(db);
  }

  async indexedSeq(db: string, signature: string): Promise<number> {
    return this.#st.seq.get(this.#databaseId(db), signature) ?? 0;
  }

  applyUpdates(db: string, signature: string, fromSeq: number, toSeq: number, updates: readonly IndexUpdate[]): Promise<boolean> {
    return this.#queue.enqueue(() => {
      const dbId = this.#databaseId(db);
      if ((this.#st.seq.get(dbId, signature) ?? 0) !== fromSeq) return false;
      for (const update of updates) {
        this.#st.deleteRow.run(dbId, signature, update.id);
        if (update.key !== undefined) this.#st.insertRow.run(dbId, signature, Buffer.from(update.key), update.id);
      }
      this.#st.setSeq.run(dbId, signature, toSeq);
      return true;
    });
  }

  async scan(db: string, signature: string, scan: IndexScan): Promise<IndexedDocument[]> {
    const dbId = this.#databaseId(db);
    const { after, order } = scanOperators(scan.descending);
    const params: unknown[] = [dbId, signature];
    let where = '';
    if (scan.gte !== undefined) {
      where += ' AND r.key >= ?';
      params.push(Buffer.from(scan.gte));
    }
    if (scan.lt !== undefined) {
      where += ' AND r.key < ?';
      params.push(Buffer.from(scan.lt));
    }
    if (scan.after !== undefined) {
      where += ` AND (r.key, r.id) ${after} (?, ?)`;
      params.push(Buffer.from(scan.after.key), scan.after.id);
    }
    params.push(scan.limit);
    const sql =
      'SELECT r.id, r.key, d.winner, d.seq, b.body FROM mango_index_rows r' +
      ' JOIN documents d ON d.db_id = r.db_id AND d.id = r.id AND d.deleted = 0' +
      ' LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner' +
      ` WHERE r.db_id = ? AND r.signature = ?${where} ORDER BY r.key ${order}, r.id ${order} LIMIT ?`;
    let statement = this.#scans.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare<unknown[], unknown>(sql);
      this.#scans.set(sql, statement);
    }
    const rows = statement.all(...params) as IndexScanRow[];
    return rows.map(indexedDocument);
  }

  drop(db: string, signature: string): Promise<void> {
    return this.#queue.enqueue(() => {
      const dbId = this.#databaseId(db);
      this.#st.dropRows.run(dbId, signature);
      this.#st.dropState.run(dbId, signature);
    });
  }
}
