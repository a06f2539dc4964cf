/**
 * Connection plumbing of the PostgreSQL backend: the pool (search_path per connection, int8 as
 * numbers, idle errors contained), transactions on one client, and error text that never shows a
 * password.
 */
import pg from 'pg';

/** `"name"` with embedded quotes doubled, for identifiers that cannot be bound as parameters. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

const PASSWORD_PARAMS = ['password', 'sslpassword'];

/**
 * The URL as it may be printed: no password, neither in the userinfo nor as a query parameter.
 * A string that is not a URL (a libpq `key=value` string) loses its password values.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    for (const name of PASSWORD_PARAMS) parsed.searchParams.delete(name);
    return parsed.toString();
  } catch {
    // Not a WHATWG URL (a bad port, a libpq key=value string): drop what looks like a password.
    return url
      .replace(USERINFO, (_, scheme: string, user: string) => `${scheme}${user}@`)
      .replace(/\b(password|sslpassword)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&]*)/gi, '$1=***');
  }
}

/** `scheme://user:password@` (up to the last `@`: a password may contain one). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^:@/]*):.*@/i;

/** The password in `url`, if any, so that it can be scrubbed from error messages. */
function passwordOf(url: string): string | undefined {
  let password: string | null = null;
  try {
    const parsed = new URL(url);
    password = parsed.password !== '' ? decodeURIComponent(parsed.password) : parsed.searchParams.get('password');
  } catch {
    const match = /^[a-z][a-z0-9+.-]*:\/\/[^:@/]*:(.*)@/i.exec(url);
    if (match !== null) password = match[1];
  }
  return password === null || password === '' ? undefined : password;
}

/** One line describing `error` (Node's AggregateError of a multi-address connect has no message). */
export function reasonOf(error: unknown, url?: string): string {
  let reason: string;
  if (error instanceof AggregateError && error.message === '' && error.errors.length > 0) {
    reason = reasonOf(error.errors[0]);
  } else if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    reason = error.message !== '' ? error.message : typeof code === 'string' ? code : error.name;
  } else {
    reason = String(error);
  }
  reason = reason.split('\n')[0].trim() || 'unknown error';
  const password = url === undefined ? undefined : passwordOf(url);
  return password === undefined ? reason : reason.split(password).join('***');
}

// int8 (bigint: sequences, counters, ids, count(*)) as JS numbers: exact up to 2^53.
const INT8_OID = 20;
const parseInt8 = (value: string): number => Number(value);
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export interface PoolSettings {
  url: string;
  schema: string;
  poolSize: number;
  connectTimeoutMs: number;
  onError: (error: Error) => void;
}

/**
 * A pool whose every new connection first sets `search_path` to the schema (queued before any other
 * query on that client). An idle connection that dies (server restart, network) is dropped and
 * reported to `onError` instead of crashing the process; the pool opens new ones on demand.
 */
export function createPool(settings: PoolSettings): pg.Pool {
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.poolSize,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    keepAlive: true,
    application_name: 'divan',
    types,
  });
  const setPath = `SET search_path TO ${quoteIdentifier(settings.schema)}`;
  pool.on('connect', (client) => {
    // A failure here means the connection is gone: the next query on it fails and reports it.
    client.query(setPath).catch(() => undefined);
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
