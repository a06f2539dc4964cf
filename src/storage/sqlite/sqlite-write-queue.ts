import type { Connection, Transaction } from './sqlite-connection.js';

interface Job {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** How long a batch may wait for another process's write lock before it fails (SQLite's busy timeout). */
const LOCK_WAIT_MS = 5000;

const isBusy = (error: unknown): boolean => (error as { code?: unknown })?.code === 'SQLITE_BUSY';

/**
 * Group commit: every write started in the same event-loop turn runs in one SQLite transaction,
 * so they share one fsync. Each job runs in its own savepoint, so a job that throws is rolled
 * back alone and only its caller sees the error; callers are answered after COMMIT.
 *
 * When another process (a sibling worker) holds the file's write lock, `BEGIN IMMEDIATE` is tried
 * without SQLite's blocking busy wait, and again a little later from a timer: the event loop keeps
 * serving reads meanwhile, and writes arriving meanwhile join the waiting batch.
 */
export class WriteQueue {
  #pending: Job[] = [];
  #scheduled = false;
  readonly #db: Connection;
  /** Since when the current batch waits for the write lock; undefined when it does not. */
  #waitingSince: number | undefined;
  #closed = false;
  #transactions = 0;
  readonly #runBatch: Transaction<(jobs: Job[]) => Outcome[]>;

  constructor(db: Connection) {
    this.#db = db;
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

  /** Runs every queued job now, in one transaction (or later, when another process holds the lock). */
  flush(): void {
    this.#scheduled = false;
    const jobs = this.#pending;
    this.#pending = [];
    if (jobs.length === 0) return;
    let outcomes: Outcome[];
    try {
      outcomes = this.#begin(jobs);
      this.#transactions++;
    } catch (error) {
      if (isBusy(error) && !this.#closed && this.#retryLater(jobs)) return;
      this.#waitingSince = undefined;
      for (const job of jobs) job.reject(error);
      return;
    }
    this.#waitingSince = undefined;
    outcomes.forEach((outcome, i) => {
      if (outcome.ok) jobs[i].resolve(outcome.value);
      else jobs[i].reject(outcome.error);
    });
  }

  /** BEGIN IMMEDIATE without a blocking busy wait while the batch may still wait asynchronously. */
  #begin(jobs: Job[]): Outcome[] {
    if (this.#closed) return this.#runBatch.immediate(jobs);
    this.#db.pragma('busy_timeout = 0');
    try {
      return this.#runBatch.immediate(jobs);
    } finally {
      this.#db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
    }
  }

  /** Puts the batch back in front of the queue and tries again shortly; false once waited too long. */
  #retryLater(jobs: Job[]): boolean {
    const now = Date.now();
    this.#waitingSince ??= now;
    if (now - this.#waitingSince > LOCK_WAIT_MS) return false;
    this.#pending = [...jobs, ...this.#pending];
    if (!this.#scheduled) {
      this.#scheduled = true;
      setTimeout(() => this.flush(), 1);
    }
    return true;
  }

  /** Commits what is queued and refuses later jobs. */
  close(): void {
    // Closed first: what is queued (a batch waiting for the lock too) commits now, waiting in SQLite's busy handler.
    this.#closed = true;
    this.flush();
  }
}
