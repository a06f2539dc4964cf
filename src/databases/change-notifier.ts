/**
 * "Database X changed" inside one node, for live `_changes` feeds: writes call `changed(db)` after
 * they commit, feeds `subscribe(db, …)` and query storage again when woken. Nothing but the name
 * travels: the feed reads the changes itself, so a lost or doubled wake-up costs one query at most.
 *
 * On a cluster (PostgreSQL), `connect` hands local changes to the cluster bus, coalesced per event
 * loop turn, and `changedElsewhere` wakes local feeds for commits made by other nodes.
 *
 * @example
 * const notifier = new ChangeNotifier()
 * const stop = notifier.subscribe('db', () => console.log('db changed'))
 * notifier.changed('db') // logs once
 * stop()
 */
export class ChangeNotifier {
  readonly #listeners = new Map<string, Set<() => void>>();
  readonly #closeListeners = new Set<() => void>();
  #publish: ((dbs: string[]) => void) | undefined;
  #outgoing = new Set<string>();
  #scheduled = false;
  #closed = false;

  /** A commit on this node changed `db` (documents, or the database was created or deleted). */
  changed(db: string): void {
    this.#wake(db);
    if (this.#publish === undefined) return;
    this.#outgoing.add(db);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
  }

  /** Another node committed a change to `db`: wake the local feeds only. */
  changedElsewhere(db: string): void {
    this.#wake(db);
  }

  /** Sends local changes to other nodes (called with batches of database names). */
  connect(publish: (dbs: string[]) => void): void {
    this.#publish = publish;
  }

  /** Calls `listener` after every change of `db`, until the returned function is called. */
  subscribe(db: string, listener: () => void): () => void {
    let set = this.#listeners.get(db);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(db, set);
    }
    set.add(listener);
    return () => {
      const current = this.#listeners.get(db);
      if (current === undefined) return;
      current.delete(listener);
      if (current.size === 0) this.#listeners.delete(db);
    };
  }

  /** Calls `listener` once when the node shuts down (feeds end cleanly instead of being cut). */
  onClose(listener: () => void): () => void {
    if (this.#closed) {
      queueMicrotask(listener);
      return () => undefined;
    }
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Subscribed listeners over all databases (observability, tests). */
  get listenerCount(): number {
    let count = 0;
    for (const set of this.#listeners.values()) count += set.size;
    return count;
  }

  /** Ends every feed: they write their last line and finish. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#flush();
    for (const listener of [...this.#closeListeners]) safely(listener);
    this.#closeListeners.clear();
  }

  #wake(db: string): void {
    const set = this.#listeners.get(db);
    if (set === undefined) return;
    for (const listener of [...set]) safely(listener);
  }

  #flush(): void {
    this.#scheduled = false;
    if (this.#outgoing.size === 0 || this.#publish === undefined) return;
    const dbs = [...this.#outgoing];
    this.#outgoing = new Set();
    safely(() => this.#publish!(dbs));
  }
}

function safely(call: () => void): void {
  try {
    call();
  } catch {
    // One failing listener must not keep the others (or the writer) from going on.
  }
}
