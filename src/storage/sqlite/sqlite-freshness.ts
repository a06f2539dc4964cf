import { closeSync, openSync, readSync } from 'node:fs';
import type { Connection } from './sqlite-connection.js';

/**
 * Bytes at the start of the `-shm` file: both copies of the WAL-index header. A commit from any
 * connection rewrites them (new frame count, or new salts when the log restarts); SQLite itself
 * compares this header to tell whether the file changed since a connection last read it.
 */
const WAL_INDEX_HEADER_BYTES = 96;

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
 *
 * Before a read, one `pread` of the WAL-index header stands in for the pragma while the header is
 * byte for byte the one read just before the pragma last ran: no connection committed since, so
 * the pragma would answer as it did. Any difference (a commit, this process's own included, or a
 * header caught mid-update) sends the read to the pragma.
 */
export class Freshness {
  readonly #version: () => unknown;
  readonly #forget: () => void;
  readonly #header: WalIndexHeader | undefined;
  #seen: unknown;
  #checked = false;
  #turnScheduled = false;

  constructor(db: Connection, forget: () => void) {
    const statement = db.prepare('PRAGMA data_version').pluck();
    this.#version = () => statement.get();
    this.#forget = forget;
    this.#header = WalIndexHeader.open(`${db.name}-shm`);
    this.#header?.snapshot();
    this.#seen = this.#version();
  }

  /** Before a read: looks at most once per outside event or loop turn. */
  beforeRead(): void {
    if (this.#checked) return;
    if (this.#header?.unchanged() !== true) this.check();
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
    // The header first: a commit between the two reads then shows as a difference next time.
    this.#header?.snapshot();
    const version = this.#version();
    if (version === this.#seen) return;
    this.#seen = version;
    this.#forget();
  }

  close(): void {
    this.#header?.close();
  }
}

/** The WAL-index header of one file, read with `pread` (SQLite maps the same pages; the kernel keeps both views one). */
class WalIndexHeader {
  #fd: number;
  readonly #last = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  readonly #now = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  #valid = false;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /** Undefined where there is no such file (an in-memory database): every read then asks the pragma. */
  static open(file: string): WalIndexHeader | undefined {
    try {
      return new WalIndexHeader(openSync(file, 'r'));
    } catch {
      return undefined;
    }
  }

  snapshot(): void {
    this.#valid = this.#read(this.#last);
  }

  /** True only when the header reads exactly as at the last snapshot. */
  unchanged(): boolean {
    return this.#valid && this.#read(this.#now) && this.#now.equals(this.#last);
  }

  close(): void {
    const fd = this.#fd;
    // Never read through a closed descriptor: its number may already name another file.
    this.#fd = -1;
    this.#valid = false;
    if (fd !== -1) closeSync(fd);
  }

  #read(into: Buffer): boolean {
    if (this.#fd === -1) return false;
    try {
      return readSync(this.#fd, into, 0, WAL_INDEX_HEADER_BYTES, 0) === WAL_INDEX_HEADER_BYTES;
    } catch {
      return false;
    }
  }
}
