import { asLockGrant } from './lock-protocol.js';
import type { NamedLocks, Release } from '../locks/named-locks.js';
import type { WorkerChannel } from './worker-protocol.js';

const noLock: Release = () => undefined;

/**
 * A worker's named locks (locks/named-locks.ts), granted by the primary (lock-service.ts) over the IPC
 * channel. Once the channel is gone (the primary died; this worker is stopping) every waiting and
 * later `acquire` resolves at once without a lock: what the locks order then falls back on
 * SQLite's own file lock, which keeps the data correct, only slower.
 */
export class IpcLocks implements NamedLocks {
  readonly #channel: WorkerChannel;
  readonly #waiting = new Map<number, (release: Release) => void>();
  #next = 0;
  #closed = false;

  constructor(channel: WorkerChannel) {
    this.#channel = channel;
    channel.onMessage((value) => {
      const grant = asLockGrant(value);
      if (grant !== undefined) this.#granted(grant.lock);
    });
    channel.onClose(() => this.close());
  }

  acquire(name: string): Promise<Release> {
    if (this.#closed) return Promise.resolve(noLock);
    const lock = ++this.#next;
    return new Promise((resolve) => {
      this.#waiting.set(lock, resolve);
      if (!this.#send({ divan: 'lock', lock, name })) this.close();
    });
  }

  /** Stops asking the primary: waiting and later callers go on without a lock. */
  close(): void {
    this.#closed = true;
    for (const resolve of this.#waiting.values()) resolve(noLock);
    this.#waiting.clear();
  }

  #granted(lock: number): void {
    const resolve = this.#waiting.get(lock);
    this.#waiting.delete(lock);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#send({ divan: 'unlock', lock });
    };
    // Granted after this worker stopped waiting (closed): give it straight back.
    if (resolve === undefined) release();
    else resolve(release);
  }

  #send(message: Parameters<WorkerChannel['send']>[0]): boolean {
    try {
      this.#channel.send(message);
      return true;
    } catch {
      return false;
    }
  }
}
