import { WRITE_LOCK, type NamedLocks, type Release } from '../../locks/named-locks.js';
import type { Connection, Transaction } from './sqlite-connection.js';
import { WalSync } from './sqlite-wal-sync.js';

interface Job {
  run: () => unknown;
  /** Its caller is answered on this commit: the commit must be on disk first. */
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** How long a batch may wait for a write lock held outside the lease before it fails (SQLite's busy timeout). */
const LOCK_WAIT_MS = 5000;

const isBusy = (error: unknown): boolean => (error as { code?: unknown })?.code === 'SQLITE_BUSY';

/**
 * Group commit: every write queued until this process's turn to write runs in one SQLite
 * transaction, so they share one fsync. Each job runs in its own savepoint, so a job that throws is
 * rolled back alone and only its caller sees the error; callers are answered after COMMIT.
 *
 * The turn is the `write` lease of the server's named locks (locks/named-locks.ts): the worker
 * processes that share the file take it in the order they asked, from before `BEGIN IMMEDIATE`
 * until right after `COMMIT`. While a batch waits for it the event loop serves reads, and writes
 * arriving meanwhile join the batch: the more the workers contend, the bigger each commit. A single
 * process holds the lease in memory, so the code path is the same.
 *
 * A write lock held outside the lease (a process that is no worker of this server, a worker
 * stopping without its channel) shows as SQLITE_BUSY: the batch keeps the lease and tries again a
 * little later from a timer, without SQLite's blocking busy wait, for at most `LOCK_WAIT_MS`.
 *
 * The fsync of a durable batch runs off the event loop (sqlite-wal-sync.ts): the batch commits
 * without it, gives the lease back, and its callers are answered once the WAL is synced; the writes
 * that arrive meanwhile (the event loop keeps serving) form the next batch, which starts when the
 * sync ends. An idle queue commits at once.
 *
 * A batch whose jobs are all non-durable (the slices of a large write but its last, view index
 * batches) commits with `synchronous = NORMAL`: no fsync. The WAL is one file written in order and
 * recovered as a prefix of whole transactions, so the next durable commit's fsync makes them durable
 * too, and a power loss before it loses them (never acknowledged) without tearing any of them.
 */
export class WriteQueue {
  #pending: Job[] = [];
  /** A turn is scheduled or under way: later jobs wait for it (and join it while it waits). */
  #scheduled = false;
  readonly #db: Connection;
  readonly #locks: NamedLocks;
  #closed = false;
  #transactions = 0;
  readonly #runBatch: Transaction<(jobs: Job[]) => Outcome[]>;
  readonly #walSync: WalSync;

  constructor(db: Connection, locks: NamedLocks) {
    this.#db = db;
    this.#locks = locks;
    this.#walSync = new WalSync(db.name);
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

  /** WAL syncs that answered durable batches so far. */
  get walSyncs(): number {
    return this.#walSync.syncs;
  }

  /**
   * Queues `run` (synchronous SQLite work) for the next batch; resolves with its result after COMMIT,
   * which is on disk unless every job of the batch is non-durable (`durable` false: see above).
   */
  enqueue<T>(run: () => T, durable = true): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('storage is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ run, durable, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  /** A turn after the current event-loop turn, so that every write started in it joins the batch. */
  #schedule(): void {
    if (this.#scheduled || this.#closed || this.#pending.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => void this.#turn());
  }

  /** Takes the lease, commits what is queued by then, gives the lease back, and schedules the next turn. */
  async #turn(): Promise<void> {
    try {
      const release: Release = await this.#locks.acquire(WRITE_LOCK);
      try {
        const started = Date.now();
        while (!this.#commitQueued(Date.now() - started > LOCK_WAIT_MS)) {
          await new Promise((wait) => setTimeout(wait, 1));
        }
      } finally {
        release();
      }
      // The writes that arrive while this batch's WAL sync runs wait for it and form the next batch.
      await this.#walSync.drained();
    } finally {
      this.#scheduled = false;
      this.#schedule();
    }
  }

  /**
   * Commits every queued job in one transaction and answers their callers; false when the file's
   * write lock is held outside the lease and the batch should try again (the jobs stay queued).
   */
  #commitQueued(waitedTooLong: boolean): boolean {
    const jobs = this.#pending;
    this.#pending = [];
    if (jobs.length === 0 || this.#commit(jobs, !waitedTooLong && !this.#closed)) return true;
    this.#pending = [...jobs, ...this.#pending];
    return false;
  }

  /**
   * Runs `jobs` in one transaction and answers each caller (with its error when the transaction
   * failed as a whole); false, answering none, when SQLITE_BUSY says to wait and `mayWait`.
   */
  #commit(jobs: Job[], mayWait: boolean): boolean {
    let outcomes: Outcome[];
    try {
      outcomes = this.#begin(jobs);
      this.#transactions++;
    } catch (error) {
      if (mayWait && isBusy(error)) return false;
      for (const job of jobs) job.reject(error);
      return true;
    }
    if (this.#syncsLater(jobs)) this.#walSync.afterSync((error) => answer(jobs, outcomes, error));
    else answer(jobs, outcomes, undefined);
    return true;
  }

  /** A durable batch committed while the queue is open: its fsync runs off the event loop. */
  #syncsLater(jobs: Job[]): boolean {
    return !this.#closed && jobs.some((job) => job.durable);
  }

  /** BEGIN IMMEDIATE without a blocking busy wait while the batch may still wait asynchronously. */
  #begin(jobs: Job[]): Outcome[] {
    // Back to FULL right after, so that nothing else ever commits without an fsync.
    const lazy = !jobs.some((job) => job.durable) || this.#syncsLater(jobs);
    if (lazy) this.#db.pragma('synchronous = NORMAL');
    try {
      if (this.#closed) return this.#runBatch.immediate(jobs);
      this.#db.pragma('busy_timeout = 0');
      try {
        return this.#runBatch.immediate(jobs);
      } finally {
        this.#db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
      }
    } finally {
      if (lazy) this.#db.pragma('synchronous = FULL');
    }
  }

  /**
   * Commits what is queued now and refuses later jobs. Without waiting for the lease (the
   * connection closes right after): a sibling holding it meets SQLite's lock and tries again.
   */
  close(): void {
    const jobs = this.#pending;
    this.#pending = [];
    this.#closed = true;
    if (jobs.length > 0) this.#commit(jobs, false);
  }

  /** Settles when every commit made so far has been answered (its fsync done). */
  synced(): Promise<void> {
    return this.#walSync.drained();
  }
}

/** Each caller's own outcome, or the sync's error for all (committed, but not known to be on disk). */
function answer(jobs: Job[], outcomes: Outcome[], syncError: unknown): void {
  outcomes.forEach((outcome, i) => {
    if (syncError !== undefined) jobs[i]!.reject(syncError);
    else if (outcome.ok) jobs[i]!.resolve(outcome.value);
    else jobs[i]!.reject(outcome.error);
  });
}
