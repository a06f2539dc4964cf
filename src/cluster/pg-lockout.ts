import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { admittedTicket, type LockoutGate, type LockoutSettings, type LockoutSnapshot, type LockoutTicket } from '../users/lockout.js';

/** The advisory lock class of lockout keys (MIGRATION_LOCK_CLASS + 1), so they never meet the migration lock. */
const LOCKOUT_LOCK_CLASS = 0x44495642;
/** An attempt row of a node that died before settling it stops counting after this long (a PBKDF2 takes far less). */
const ATTEMPT_STALE_MS = 60_000;
/** How often an attempt that must wait for attempts in flight on other nodes asks again. */
const RETRY_MS = 20;
/** How often this process deletes the expired rows of keys nobody tries any more. */
const SWEEP_MS = 60_000;

/**
 * The `[chttpd_auth_lockout]` of nodes sharing one PostgreSQL store: the node's own lockout (`inner`,
 * one process's or the primary's) decides first, then a place is taken in `lockout_attempts`
 * under a per-key advisory lock, counted with `lockout_failures` of every node. So failures plus
 * attempts in flight over the whole cluster never exceed `threshold` (each node used to check
 * `threshold` guesses of its own). When PostgreSQL cannot be asked, the node's lockout decides alone.
 */
export class PostgresLockout implements LockoutGate {
  readonly #inner: LockoutGate;
  readonly #pool: pg.Pool;
  readonly #attempts: string;
  readonly #failures: string;
  readonly #nodeId: string;
  readonly #onError: (message: string) => void;
  readonly #staleMs: number;
  #settings: LockoutSettings;
  #lastSweep = 0;

  constructor(inner: LockoutGate, settings: LockoutSettings, options: PostgresLockoutOptions) {
    this.#inner = inner;
    this.#settings = settings;
    this.#pool = options.pool;
    const schema = pg.escapeIdentifier(options.schema);
    this.#attempts = `${schema}.lockout_attempts`;
    this.#failures = `${schema}.lockout_failures`;
    this.#nodeId = options.nodeId;
    this.#onError = options.onError;
    this.#staleMs = options.attemptStaleMs ?? ATTEMPT_STALE_MS;
  }

  get mode(): LockoutGate['mode'] {
    return this.#inner.mode;
  }

  get onLocalFailure(): LockoutGate['onLocalFailure'] {
    return this.#inner.onLocalFailure;
  }

  set onLocalFailure(listener: LockoutGate['onLocalFailure']) {
    this.#inner.onLocalFailure = listener;
  }

  configure(settings: LockoutSettings): void {
    this.#settings = settings;
    this.#inner.configure(settings);
  }

  recordRemoteFailure(peer: string, name: string, salt: string): void {
    this.#inner.recordRemoteFailure(peer, name, salt);
  }

  snapshot(): LockoutSnapshot {
    return this.#inner.snapshot();
  }

  merge(snapshot: LockoutSnapshot): void {
    this.#inner.merge(snapshot);
  }

  /** A cached right password for a key with no known failure still needs no admission. */
  admitsAtOnce(peer: string, name: string, salt: string): boolean {
    return this.#inner.admitsAtOnce(peer, name, salt);
  }

  unreserved(peer: string, name: string, salt: string): LockoutTicket {
    return this.#inner.unreserved(peer, name, salt);
  }

  /** Only a lock is known at once: an admission needs PostgreSQL. */
  admitNow(peer: string, name: string, salt: string): LockoutTicket | undefined {
    const ticket = this.#inner.admitNow(peer, name, salt);
    if (this.#settings.mode !== 'enforce' || ticket === undefined || ticket.locked) return ticket;
    ticket.settle(false);
    return undefined;
  }

  async admit(peer: string, name: string, salt: string): Promise<LockoutTicket> {
    const local = await this.#inner.admit(peer, name, salt);
    if (this.#settings.mode !== 'enforce' || local.locked) return local;
    this.#sweepNowAndThen();
    const key = createHash('sha256').update(`${peer}\u0000${name}\u0000${salt}`).digest('hex');
    try {
      for (;;) {
        const place = await this.#take(key);
        if (place === 'locked') {
          local.settle(false);
          return lockedTicket;
        }
        if (place !== 'wait') {
          return admittedTicket((failed) => {
            local.settle(failed);
            this.#settle(place, key, failed);
          });
        }
        await sleep(RETRY_MS);
      }
    } catch (error) {
      this.#onError(`cluster-wide lockout unavailable, this node's lockout decides alone: ${(error as Error).message}`);
      return local;
    }
  }

  /** One transaction under the key's advisory lock: the attempt's row id, or why it has none. */
  async #take(key: string): Promise<string | 'locked' | 'wait'> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1::int4, hashtext($2))', [LOCKOUT_LOCK_CLASS, key]);
      const lifetime = `${this.#settings.maxLifetimeMs} milliseconds`;
      await client.query(`DELETE FROM ${this.#attempts} WHERE key = $1 AND expires_at < clock_timestamp()`, [key]);
      await client.query(`DELETE FROM ${this.#failures} WHERE key = $1 AND failed_at < clock_timestamp() - $2::interval`, [key, lifetime]);
      const counts = await client.query<{ failures: number; attempts: number }>(
        `SELECT (SELECT count(*)::int FROM ${this.#failures} WHERE key = $1) AS failures,
                (SELECT count(*)::int FROM ${this.#attempts} WHERE key = $1) AS attempts`,
        [key],
      );
      const { failures, attempts } = counts.rows[0]!;
      let place: string | 'locked' | 'wait' = failures >= this.#settings.threshold ? 'locked' : 'wait';
      if (place === 'wait' && failures + attempts < this.#settings.threshold) {
        const inserted = await client.query<{ attempt_id: string }>(
          `INSERT INTO ${this.#attempts} (key, node, expires_at) VALUES ($1, $2, clock_timestamp() + $3::interval) RETURNING attempt_id`,
          [key, this.#nodeId, `${this.#staleMs} milliseconds`],
        );
        place = inserted.rows[0]!.attempt_id;
      }
      await client.query('COMMIT');
      return place;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Rows are deleted per key at each admission; those of keys never tried again go here. */
  #sweepNowAndThen(): void {
    const now = Date.now();
    if (now - this.#lastSweep < SWEEP_MS) return;
    this.#lastSweep = now;
    const lifetime = `${this.#settings.maxLifetimeMs} milliseconds`;
    this.#pool
      .query(
        `WITH stale AS (DELETE FROM ${this.#attempts} WHERE expires_at < clock_timestamp())
         DELETE FROM ${this.#failures} WHERE failed_at < clock_timestamp() - $1::interval`,
        [lifetime],
      )
      .catch((error: unknown) => this.#onError(`cannot delete expired lockout rows on PostgreSQL: ${(error as Error).message}`));
  }

  /** Frees the attempt's place and, when it failed, counts the failure, in one statement. */
  #settle(attemptId: string, key: string, failed: boolean): void {
    this.#pool
      .query(
        `WITH freed AS (DELETE FROM ${this.#attempts} WHERE attempt_id = $1)
         INSERT INTO ${this.#failures} (key) SELECT $2 WHERE $3::boolean`,
        [attemptId, key, failed],
      )
      .catch((error: unknown) => this.#onError(`cannot settle a lockout attempt on PostgreSQL: ${(error as Error).message}`));
  }

  async close(): Promise<void> {
    await this.#pool.end().catch(() => undefined);
  }
}

export interface PostgresLockoutOptions {
  pool: pg.Pool;
  schema: string;
  nodeId: string;
  onError: (message: string) => void;
  attemptStaleMs?: number;
}

/** A pool of its own: a guess waiting for its place must not hold a connection the bus or storage needs. */
export function lockoutPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 4, application_name: 'divan-lockout' });
  pool.on('error', () => undefined);
  return pool;
}

/** A refused attempt: it ends with its 403 and counts nothing. */
const lockedTicket: LockoutTicket = { locked: true, settle: () => undefined };
