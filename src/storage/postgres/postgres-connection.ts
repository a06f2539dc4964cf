/**
 * Connection plumbing of the PostgreSQL backend: the pool (search_path per connection, int8 as
 * numbers, idle errors contained) and transactions on one client (error text without a password: log/redaction.ts).
 */
import pg from 'pg';
import { reasonOf } from '../../log/redaction.js';

/** `"name"` with embedded quotes doubled, for identifiers that cannot be bound as parameters. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

// int8 (bigint: sequences, counters, ids, count(*)) as JS numbers: exact up to 2^53.
const INT8_OID = 20;
const parseInt8 = (value: string): number => Number(value);
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

interface PoolSettings {
  url: string;
  schema: string;
  poolSize: number;
  connectTimeoutMs: number;
  onError: (error: Error) => void;
}

/**
 * A pool whose every new connection first sets `search_path` to the schema (before the pool hands
 * it out). An idle connection that dies (server restart, network) is dropped and
 * reported to `onError` instead of crashing the process; the pool opens new ones on demand.
 */
export function createPool(settings: PoolSettings): pg.Pool {
  const setPath = `SET search_path TO ${quoteIdentifier(settings.schema)}`;
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.poolSize,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    keepAlive: true,
    application_name: 'divan',
    types,
    // Awaited before the pool hands the new connection out: a query sent from the pool's 'connect'
    // event would still be queued when the caller's first query arrives (pg warns of a client used
    // by two queries at once), and a failure would surface only on a later query.
    onConnect: async (client) => {
      await client.query(setPath);
    },
  });
  pool.on('error', (error) => settings.onError(error));
  return pool;
}

/** Why a transaction did not commit, and whether its work may be retried elsewhere. */
export class TransactionError extends Error {
  /** The error thrown by the work (or by BEGIN/COMMIT). */
  readonly error: unknown;
  /**
   * `work`: the work failed and was rolled back on a healthy connection (retrying is safe).
   * `connection`: no transaction could be started, or the connection broke (nothing was committed).
   * `commit`: COMMIT failed: the outcome is unknown, never retry.
   */
  readonly phase: 'work' | 'connection' | 'commit';

  constructor(phase: 'work' | 'connection' | 'commit', error: unknown) {
    super(reasonOf(error));
    this.phase = phase;
    this.error = error;
  }
}

/**
 * Runs `work` between BEGIN and COMMIT on one pooled client; resolves after COMMIT (durable with
 * PostgreSQL's default synchronous_commit=on). Rejects with a `TransactionError`.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new TransactionError('connection', error);
  }
  // While checked out, a client has no 'error' listener of the pool's: an unexpected disconnect
  // between two queries would otherwise be an unhandled 'error' event.
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  const release = (destroy: boolean): void => {
    client.removeListener('error', onError);
    client.release(destroy || broken !== undefined ? (broken ?? new Error('connection discarded')) : undefined);
  };
  try {
    await client.query('BEGIN');
  } catch (error) {
    release(true);
    throw new TransactionError('connection', error);
  }
  let result: T;
  try {
    result = await work(client);
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch {
      release(true);
      throw new TransactionError('connection', error);
    }
    release(false);
    throw new TransactionError(broken === undefined ? 'work' : 'connection', error);
  }
  try {
    await client.query('COMMIT');
  } catch (error) {
    release(true);
    throw new TransactionError('commit', error);
  }
  release(false);
  return result;
}
