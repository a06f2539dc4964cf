/**
 * Group commit per database: writes to one database name queue in a lane, and every write queued
 * while the lane's previous transaction ran (or in the same event-loop turn) goes into the next
 * transaction. Lanes of different databases run in parallel on the pool; within a lane, jobs run in
 * the order they were queued, so a write queued after a delete sees the database gone.
 *
 * Callers are answered after COMMIT. When the batch's work fails (a PostgreSQL error in one job),
 * the transaction is rolled back and each job is retried alone, so only the faulty job fails. When
 * COMMIT itself fails the outcome is unknown and every job of the batch is rejected, never retried.
 */
import type pg from 'pg';
import { inTransaction, TransactionError } from './postgres-connection.js';

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Runs a batch of jobs of lane `key` inside one transaction and answers each. It returns a failed
 * outcome for a job that failed before writing anything (a missing database), and throws when the
 * transaction can no longer be committed.
 */
type BatchExecutor<J> = (client: pg.PoolClient, key: string, jobs: J[]) => Promise<Outcome[]>;

interface Pending<J> {
  job: J;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Lane<J> {
  key: string;
  pending: Pending<J>[];
  /** Settles when the lane has nothing left to run. */
  done: Promise<void>;
}

export class WriteLanes<J> {
  readonly #pool: pg.Pool;
  readonly #execute: BatchExecutor<J>;
  readonly #lanes = new Map<string, Lane<J>>();
  #closed = false;
  #transactions = 0;

  constructor(pool: pg.Pool, execute: BatchExecutor<J>) {
    this.#pool = pool;
    this.#execute = execute;
  }

  /** Transactions committed so far (proof of batching in tests, observability). */
  get transactions(): number {
    return this.#transactions;
  }

  enqueue<T>(key: string, job: J): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('storage is closed'));
    return new Promise<T>((resolve, reject) => {
      const pending: Pending<J> = { job, resolve: resolve as (value: unknown) => void, reject };
      const lane = this.#lanes.get(key);
      if (lane !== undefined) {
        lane.pending.push(pending);
        return;
      }
      const fresh: Lane<J> = { key, pending: [pending], done: Promise.resolve() };
      this.#lanes.set(key, fresh);
      // Let the rest of this event-loop turn queue its writes into the same batch.
      fresh.done = new Promise<void>((started) => setImmediate(started)).then(() => this.#drain(fresh));
    });
  }

  /** Refuses new jobs and resolves when every queued one has been answered. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#lanes.size > 0) {
      await Promise.all([...this.#lanes.values()].map((lane) => lane.done));
    }
  }

  async #drain(lane: Lane<J>): Promise<void> {
    while (lane.pending.length > 0) {
      const batch = lane.pending;
      lane.pending = [];
      await this.#runBatch(lane.key, batch);
    }
    this.#lanes.delete(lane.key);
  }

  async #runBatch(key: string, batch: Pending<J>[]): Promise<void> {
    try {
      const outcomes = await this.#transaction(key, batch);
      settle(batch, outcomes);
      return;
    } catch (error) {
      const failure = error as TransactionError;
      if (failure.phase !== 'work' || batch.length === 1) {
        for (const pending of batch) pending.reject(failure.error);
        return;
      }
    }
    // Nothing was committed: run the jobs again one transaction each, in order.
    for (const pending of batch) {
      try {
        settle([pending], await this.#transaction(key, [pending]));
      } catch (error) {
        pending.reject((error as TransactionError).error);
      }
    }
  }

  async #transaction(key: string, batch: Pending<J>[]): Promise<Outcome[]> {
    const outcomes = await inTransaction(this.#pool, (client) =>
      this.#execute(
        client,
        key,
        batch.map((pending) => pending.job),
      ),
    );
    this.#transactions++;
    return outcomes;
  }
}

function settle<J>(batch: Pending<J>[], outcomes: Outcome[]): void {
  batch.forEach((pending, i) => {
    const outcome = outcomes[i];
    if (outcome.ok) pending.resolve(outcome.value);
    else pending.reject(outcome.error);
  });
}
