/**
 * Named locks shared by the processes of one server: the SQLite write lease (`write`) and the
 * updater of each view index. `acquire` waits its turn, first come first served, and answers the
 * function that gives the lock up. One process (`workers = 1`) holds them in memory
 * (`LocalLocks`); the workers of `[divan] workers` ask the primary over their IPC channel
 * (`IpcLocks` in ipc-locks.ts, granted by `LockService` in lock-service.ts), which keeps the same
 * `LockTable` and gives up every lock of a worker that dies.
 */
export type Release = () => void;

export interface NamedLocks {
  /** Resolves once this caller holds lock `name`; never rejects. */
  acquire(name: string): Promise<Release>;
}

/** Runs `work` holding lock `name`, given up however `work` ends. */
export async function holding<T>(locks: NamedLocks, name: string, work: () => Promise<T>): Promise<T> {
  const release = await locks.acquire(name);
  try {
    return await work();
  } finally {
    release();
  }
}

/** The SQLite write lease: held from before `BEGIN IMMEDIATE` until right after `COMMIT`. */
export const WRITE_LOCK = 'write';

/**
 * FIFO queues of named locks: the first holder in a name's queue holds the lock, the others wait
 * in the order they asked. `grant` is called for each holder when its turn comes.
 */
export class LockTable<H> {
  readonly #queues = new Map<string, H[]>();
  readonly #grant: (name: string, holder: H) => void;

  constructor(grant: (name: string, holder: H) => void) {
    this.#grant = grant;
  }

  request(name: string, holder: H): void {
    let queue = this.#queues.get(name);
    if (queue === undefined) {
      queue = [];
      this.#queues.set(name, queue);
    }
    queue.push(holder);
    if (queue.length === 1) this.#grant(name, holder);
  }

  /** Gives the lock up, or leaves the queue when `holder` was still waiting. */
  release(name: string, holder: H): void {
    this.#remove(name, (each) => each === holder);
  }

  /** Every lock and place in a queue of the holders `which` selects (a worker that died). */
  releaseWhere(which: (holder: H) => boolean): void {
    for (const name of [...this.#queues.keys()]) this.#remove(name, which);
  }

  /** Holders of `name`, the one holding it first (observability, tests). */
  queueOf(name: string): readonly H[] {
    return this.#queues.get(name) ?? [];
  }

  #remove(name: string, which: (holder: H) => boolean): void {
    const queue = this.#queues.get(name);
    if (queue === undefined) return;
    const head = queue[0];
    const rest = queue.filter((holder) => !which(holder));
    if (rest.length === 0) this.#queues.delete(name);
    else this.#queues.set(name, rest);
    if (rest.length > 0 && rest[0] !== head) this.#grant(name, rest[0]!);
  }
}

/** The locks of a server that is a single process: the same FIFO, without IPC. */
export class LocalLocks implements NamedLocks {
  readonly #table = new LockTable<() => void>((_name, grant) => grant());

  acquire(name: string): Promise<Release> {
    return new Promise((resolve) => {
      const holder = (): void => {
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.#table.release(name, holder);
        });
      };
      this.#table.request(name, holder);
    });
  }
}
