/**
 * What the SQLite backend keeps of its reads. It drops an entry exactly when its own write changes
 * it, and everything when another process (a sibling worker) committed to the file, which
 * `PRAGMA data_version` tells before every read; the PostgreSQL backend caches nothing. Cached
 * values are deep-frozen: every caller gets the same object.
 */
import type { StoredRevision } from '../storage.js';

/**
 * A size-bounded LRU of winning revisions by (database id, document id). Database ids are never
 * reused, so a deleted and recreated database never meets old entries.
 */
export class WinnerCache {
  readonly #entries = new Map<string, { stored: StoredRevision; size: number }>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  get(dbId: number, id: string): StoredRevision | undefined {
    const key = `${dbId}\u0000${id}`;
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.stored;
  }

  set(dbId: number, id: string, stored: StoredRevision): void {
    // Revision lists count too: up to 1000 ancestors (revs_limit) of ~100 heap bytes each would
    // otherwise let a cache bounded at 32 MiB hold gigabytes of histories.
    const revisions = stored.revisionPath.length + stored.conflicts.length + stored.deletedConflicts.length;
    const bodyBytes = JSON.stringify(stored.body).length;
    const otherBytes = id.length + 256 + 100 * revisions;
    if (bodyBytes + otherBytes > this.#maxBytes / 64) return;
    // The body counts twice in the bound: a read may keep the revision's reply text for as long
    // as the revision is cached (opened-database.ts).
    const size = 2 * bodyBytes + otherBytes;
    this.delete(dbId, id);
    this.#entries.set(`${dbId}\u0000${id}`, { stored: deepFreeze(stored), size });
    this.#bytes += size;
    while (this.#bytes > this.#maxBytes) {
      const [oldest, entry] = this.#entries.entries().next().value as [string, { size: number }];
      this.#entries.delete(oldest);
      this.#bytes -= entry.size;
    }
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  delete(dbId: number, id: string): void {
    const key = `${dbId}\u0000${id}`;
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.size;
  }
}

/** Freezes `value` and everything in it, so that one cached object can be handed to every caller. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
