import { open } from 'node:fs/promises';

/**
 * The fsync that makes the write queue's commits durable, taken off the event loop: a batch commits
 * with `synchronous = NORMAL` (its frames are written to the WAL, not yet synced), hands its answers
 * here, and they go out once an `fdatasync` of the WAL that started after its COMMIT has finished.
 * One sync at a time: the batches committed while one runs share the next, as the requests that
 * arrive while a commit is in flight share the next transaction (CouchDB's couch_db_updater merges
 * the updates waiting in its mailbox the same way). An idle writer syncs at once.
 *
 * The WAL is one file written in order and recovered as a prefix of whole transactions, so a sync
 * covers every commit before it. Until it finishes, readers may see a commit whose writer has no
 * answer yet; a power loss in that window loses it (it was never acknowledged) without tearing it.
 */
export class WalSync {
  readonly #wal: string;
  #waiting: ((error: unknown) => void)[] = [];
  #running: Promise<void> | undefined;
  #syncs = 0;

  constructor(databaseFile: string) {
    this.#wal = `${databaseFile}-wal`;
  }

  /** Calls `answer` (with the error, if the sync failed) once what is committed now is on disk. */
  afterSync(answer: (error: unknown) => void): void {
    this.#waiting.push(answer);
    this.#running ??= this.#run();
  }

  /** WAL syncs finished so far (proof, in tests, that an answer waited for one). */
  get syncs(): number {
    return this.#syncs;
  }

  /** Settles when every answer handed in so far has been given. */
  async drained(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  async #run(): Promise<void> {
    while (this.#waiting.length > 0) {
      const answers = this.#waiting;
      this.#waiting = [];
      const error = await this.#syncWal();
      this.#syncs++;
      for (const answer of answers) answer(error);
    }
    this.#running = undefined;
  }

  /** Undefined when the WAL is on disk, else the error. */
  async #syncWal(): Promise<unknown> {
    try {
      const handle = await open(this.#wal, 'r');
      try {
        await handle.datasync();
      } finally {
        await handle.close();
      }
      return undefined;
    } catch (error) {
      // SQLite removes the WAL only after checkpointing it into the synced database file.
      return (error as { code?: unknown }).code === 'ENOENT' ? undefined : error;
    }
  }
}
