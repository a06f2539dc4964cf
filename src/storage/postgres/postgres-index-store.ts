/**
 * Mango index rows in PostgreSQL (`mango_indexes`, `mango_index_rows`): keys are bytea, compared
 * byte by byte, ids are `COLLATE "C"`, so the primary key (db, signature, key, id) is the index order.
 *
 * Several nodes share one index: an update locks the index's state row (`FOR UPDATE`) and applies
 * only when the index is still at the sequence the updater read from, so two nodes catching up at
 * once never interleave their rows; the loser sees `false` and reads again. The database row is
 * held `FOR KEY SHARE`, so deleting the database waits for (or stops) an update in progress.
 */
import type pg from 'pg';
import { databaseMissing } from '../../errors/catalog.js';
import { indexedDocument, scanOperators, type IndexedDocument, type IndexScanRow, type IndexScan, type IndexStore, type IndexUpdate } from '../index-store.js';
import { inTransaction } from './postgres-connection.js';


export class PostgresIndexStore implements IndexStore {
  readonly #pool: pg.Pool;
  readonly #checkOpen: () => void;

  constructor(pool: pg.Pool, checkOpen: () => void) {
    this.#pool = pool;
    this.#checkOpen = checkOpen;
  }

  async indexedSeq(db: string, signature: string): Promise<number> {
    this.#checkOpen();
    const { rows } = await this.#pool.query<{ db_id: number; indexed_seq: number | null }>(
      `SELECT x.db_id, i.indexed_seq FROM databases x
       LEFT JOIN mango_indexes i ON i.db_id = x.db_id AND i.signature = $2 WHERE x.name = $1`,
      [db, signature],
    );
    if (rows.length === 0) throw databaseMissing();
    return rows[0]!.indexed_seq ?? 0;
  }

  async applyUpdates(db: string, signature: string, fromSeq: number, toSeq: number, updates: readonly IndexUpdate[]): Promise<boolean> {
    this.#checkOpen();
    return inTransaction(this.#pool, async (client) => {
      const found = await client.query<{ db_id: number }>('SELECT db_id FROM databases WHERE name = $1 FOR KEY SHARE', [db]);
      if (found.rows.length === 0) throw databaseMissing();
      const dbId = found.rows[0]!.db_id;
      await client.query('INSERT INTO mango_indexes (db_id, signature, indexed_seq) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING', [dbId, signature]);
      const state = await client.query<{ indexed_seq: number }>(
        'SELECT indexed_seq FROM mango_indexes WHERE db_id = $1 AND signature = $2 FOR UPDATE',
        [dbId, signature],
      );
      if (state.rows[0]!.indexed_seq !== fromSeq) return false;
      if (updates.length > 0) {
        await client.query('DELETE FROM mango_index_rows WHERE db_id = $1 AND signature = $2 AND id = ANY($3::text[])', [
          dbId,
          signature,
          updates.map((update) => update.id),
        ]);
        const kept = updates.filter((update) => update.key !== undefined);
        await client.query(
          'INSERT INTO mango_index_rows (db_id, signature, key, id) SELECT $1, $2, k, i FROM unnest($3::bytea[], $4::text[]) AS t(k, i)',
          [dbId, signature, kept.map((update) => Buffer.from(update.key!)), kept.map((update) => update.id)],
        );
      }
      await client.query('UPDATE mango_indexes SET indexed_seq = $3 WHERE db_id = $1 AND signature = $2', [dbId, signature, toSeq]);
      return true;
    });
  }

  async scan(db: string, signature: string, scan: IndexScan): Promise<IndexedDocument[]> {
    this.#checkOpen();
    const { after, order } = scanOperators(scan.descending);
    const params: unknown[] = [db, signature];
    const param = (value: unknown): string => `$${params.push(value)}`;
    let where = '';
    if (scan.gte !== undefined) where += ` AND r.key >= ${param(Buffer.from(scan.gte))}`;
    if (scan.lt !== undefined) where += ` AND r.key < ${param(Buffer.from(scan.lt))}`;
    if (scan.after !== undefined) where += ` AND (r.key, r.id) ${after} (${param(Buffer.from(scan.after.key))}::bytea, ${param(scan.after.id)}::text)`;
    const { rows } = await this.#pool.query<IndexScanRow>(
      `SELECT r.id, r.key, d.winner, d.seq, b.body FROM mango_index_rows r
       JOIN documents d ON d.db_id = r.db_id AND d.id = r.id AND NOT d.deleted
       LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner
       WHERE r.db_id = (SELECT db_id FROM databases WHERE name = $1) AND r.signature = $2${where}
       ORDER BY r.key ${order}, r.id ${order} LIMIT ${param(scan.limit)}`,
      params,
    );
    return rows.map(indexedDocument);
  }

  async drop(db: string, signature: string): Promise<void> {
    this.#checkOpen();
    await inTransaction(this.#pool, async (client) => {
      const found = await client.query<{ db_id: number }>('SELECT db_id FROM databases WHERE name = $1 FOR KEY SHARE', [db]);
      if (found.rows.length === 0) return;
      const dbId = found.rows[0]!.db_id;
      await client.query('DELETE FROM mango_index_rows WHERE db_id = $1 AND signature = $2', [dbId, signature]);
      await client.query('DELETE FROM mango_indexes WHERE db_id = $1 AND signature = $2', [dbId, signature]);
    });
  }
}
