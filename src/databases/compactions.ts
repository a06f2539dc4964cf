/**
 * Compactions running on this node, started by `POST /{db}/_compact`: the request is answered at
 * once (202, as CouchDB) and the storage stems revision trees to `_revs_limit` and reclaims
 * superseded revision bodies in slices meanwhile (Storage.compact), so the event loop and concurrent writes go on. A second request for a
 * database already being compacted joins the running one; `GET /{db}` shows `compact_running`.
 */
import { isCouchError } from '../errors/couch-error.js';
import type { Logger } from '../log/logger.js';
import type { Storage } from '../storage/storage.js';
import type { ActiveTasks } from '../tasks/active-tasks.js';

export class Compactions {
  readonly #storage: Storage;
  readonly #tasks: ActiveTasks;
  readonly #log: Logger | undefined;
  readonly #running = new Map<string, Promise<void>>();

  constructor(storage: Storage, tasks: ActiveTasks, log: Logger | undefined) {
    this.#storage = storage;
    this.#tasks = tasks;
    this.#log = log;
  }

  isRunning(db: string): boolean {
    return this.#running.has(db);
  }

  /** Starts compacting `db` unless it already is; resolves when that compaction ends (never rejects). */
  start(db: string): Promise<void> {
    const running = this.#running.get(db);
    if (running !== undefined) return running;
    const task = this.#tasks.begin({ type: 'database_compaction', database: db, progress: 0, changes_done: 0, total_changes: 0 });
    const compaction = this.#storage
      .compact(db)
      .then((bytes) => this.#log?.info(`compacted ${JSON.stringify(db)}: ${bytes} bytes of superseded revisions reclaimed`))
      .catch((error: unknown) => {
        // A database deleted while it was compacted has nothing left to compact.
        if (isCouchError(error) && error.status === 404) return;
        this.#log?.error(`compaction of ${JSON.stringify(db)} failed: ${(error as Error).message}`);
      })
      .finally(() => {
        task.finish();
        this.#running.delete(db);
      });
    this.#running.set(db, compaction);
    return compaction;
  }
}
