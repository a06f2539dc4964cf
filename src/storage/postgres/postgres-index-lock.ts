/**
 * One updater per index across the nodes sharing a schema: a session advisory lock held on a
 * connection of its own while the update runs (the view and search stores).
 */
import type pg from 'pg';

/** Runs `work` holding the advisory lock (`lockClass`, hash of `name`); a connection that fails to unlock is discarded. */
export async function withIndexLock<T>(pool: pg.Pool, lockClass: number, name: string, work: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const key = [lockClass, name];
  let broken = false;
  try {
    await client.query('SELECT pg_advisory_lock($1::int4, hashtext($2))', key);
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::int4, hashtext($2))', key).catch(() => (broken = true));
    }
  } finally {
    client.release(broken);
  }
}
