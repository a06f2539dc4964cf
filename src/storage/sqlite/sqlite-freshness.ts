import type { Connection } from './sqlite-connection.js';

/**
 * Whether another process (a sibling worker) committed to the file since this one last looked:
 * `PRAGMA data_version` changes when another connection commits. When it did, `forget` drops
 * every cached read (database ids, `_security`, winning revisions).
 *
 * The pragma costs a read transaction of its own, as much as the rest of a cached document read.
 * So reads ask it once until something from outside arrives (`outsideEvent`: a request, a
 * sibling's message) or the event loop turns: nothing that could have seen another process's
 * commit reaches this process without one of those, so no read misses a commit that happened
 * before whatever asked for it. Writes ask inside their transaction every time (`check`).
 */
export class Freshness {
  readonly #version: () => unknown;
  readonly #forget: () => void;
  #seen: unknown;
  #checked = false;
  #turnScheduled = false;

  constructor(db: Connection, forget: () => void) {
    const statement = db.prepare('PRAGMA data_version').pluck();
    this.#version = () => statement.get();
    this.#forget = forget;
    this.#seen = this.#version();
  }

  /** Before a read: looks at most once per outside event or loop turn. */
  beforeRead(): void {
    if (this.#checked) return;
    this.check();
    this.#checked = true;
    if (!this.#turnScheduled) {
      this.#turnScheduled = true;
      setImmediate(() => {
        this.#turnScheduled = false;
        this.#checked = false;
      });
    }
  }

  outsideEvent(): void {
    this.#checked = false;
  }

  /** Looks now (inside a write transaction, the file's write lock held). */
  check(): void {
    const version = this.#version();
    if (version === this.#seen) return;
    this.#seen = version;
    this.#forget();
  }
}
