import type { Connection, Transaction } from './sqlite-connection.js';

interface Job {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit: every write started in the same event-loop turn runs in one SQLite transaction,
 * so they share one fsync. Each job runs in its own savepoint, so a job that throws is rolled
 * back alone and only its caller sees the error; callers are answered after COMMIT.
 */
export class WriteQueue {
  #pending: Job[] = [];
  #scheduled = false;
  #closed = false;
  #transactions = 0;
  readonly #runBatch: Transaction<(jobs: Job[]) => Outcome[]>;

  constructor(db: Connection) {
    // better-sqlite3 turns a transaction function called inside another into a savepoint.
    const runJob = db.transaction((job: Job) => job.run());
    this.#runBatch = db.transaction((jobs: Job[]): Outcome[] =>
      jobs.map((job) => {
        try {
          return { ok: true, value: runJob(job) };
        } catch (error) {
          // Some errors (disk full, I/O) abort the whole transaction: then nothing in the batch
          // can be committed, so let the batch fail as a whole.
          if (!db.inTransaction) throw error;
          return { ok: false, error };
        }
      }),
    );
  }

  /** Number of transactions committed so far (observability, and proof of batching in tests). */
  get transactions(): number {
    return this.#transactions;
  }

  /** Queues `run` (synchronous SQLite work) for the next batch; resolves with its result after COMMIT. */
  enqueue<T>(run: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('storage is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs every queued job now, in one transaction. */
  flush(): void {
    this.#scheduled = false;
    const jobs = this.#pending;
    this.#pending = [];
    if (jobs.length === 0) return;
    let outcomes: Outcome[];
    try {
      outcomes = this.#runBatch.immediate(jobs);
      this.#transactions++;
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    outcomes.forEach((outcome, i) => {
      if (outcome.ok) jobs[i].resolve(outcome.value);
      else jobs[i].reject(outcome.error);
    });
  }

  /** Commits what is queued and refuses later jobs. */
  close(): void {
    this.flush();
    this.#closed = true;
  }
}
