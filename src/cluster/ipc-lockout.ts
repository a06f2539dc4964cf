import { admittedTicket, Lockout, type LockoutGate, type LockoutMode, type LockoutSettings, type LockoutSnapshot, type LockoutTicket } from '../users/lockout.js';
import { asLockoutAnswer, type LockoutRequest } from './lockout-protocol.js';
import type { WorkerChannel } from './worker-protocol.js';

/**
 * A worker's lockout when the server has several: in `enforce` mode every attempt that needs a
 * verdict is admitted by the primary's node-wide lockout (lockout-service.ts), so N workers admit
 * `threshold` concurrent guesses in all, not N × `threshold`, and a replacement worker inherits the
 * node's counts.
 *
 * The worker keeps its own copy of the failures (its own, its siblings' and other nodes', all
 * relayed as `lockout` cluster messages before their 401 is sent) to answer without a round trip
 * where it can: a key it knows to be locked is refused at once, and a cached right password for a
 * key with no failure known passes at once (the hot path of Basic authentication). `warn` and `off`
 * need no admission: they are decided on that copy alone. Without a primary (the worker is
 * stopping) the copy decides everything, as a single process would.
 */
export class IpcLockout implements LockoutGate {
  readonly #channel: WorkerChannel;
  readonly #known: Lockout;
  readonly #waiting = new Map<number, (locked: boolean | undefined) => void>();
  #settings: LockoutSettings;
  #next = 0;
  #closed = false;

  constructor(settings: LockoutSettings, channel: WorkerChannel) {
    this.#settings = settings;
    this.#known = new Lockout(settings);
    this.#channel = channel;
    channel.onMessage((value) => {
      const answer = asLockoutAnswer(value);
      if (answer === undefined) return;
      const resolve = this.#waiting.get(answer.attempt);
      this.#waiting.delete(answer.attempt);
      // Admitted after this worker stopped waiting (closed): give the place straight back.
      if (resolve === undefined) this.#send({ divan: 'lockout-settle', attempt: answer.attempt, failed: false });
      else resolve(answer.locked);
    });
    channel.onClose(() => this.close());
  }

  get mode(): LockoutMode {
    return this.#settings.mode;
  }

  get onLocalFailure(): LockoutGate['onLocalFailure'] {
    return this.#known.onLocalFailure;
  }

  set onLocalFailure(listener: LockoutGate['onLocalFailure']) {
    this.#known.onLocalFailure = listener;
  }

  configure(settings: LockoutSettings): void {
    this.#settings = settings;
    this.#known.configure(settings);
  }

  recordRemoteFailure(peer: string, name: string, salt: string): void {
    this.#known.recordRemoteFailure(peer, name, salt);
  }

  snapshot(): LockoutSnapshot {
    return this.#known.snapshot();
  }

  merge(snapshot: LockoutSnapshot): void {
    this.#known.merge(snapshot);
  }

  admitsAtOnce(peer: string, name: string, salt: string): boolean {
    if (this.#settings.mode !== 'enforce' || this.#closed) return this.#known.admitsAtOnce();
    return this.#settings.threshold > 0 && this.#known.failuresOf(peer, name, salt) === 0;
  }

  unreserved(peer: string, name: string, salt: string): LockoutTicket {
    return this.#known.unreserved(peer, name, salt);
  }

  admitNow(peer: string, name: string, salt: string): LockoutTicket | undefined {
    if (this.#settings.mode !== 'enforce' || this.#closed) return this.#known.admitNow(peer, name, salt);
    return this.#known.isLocked(peer, name, salt) ? lockedTicket : undefined;
  }

  async admit(peer: string, name: string, salt: string): Promise<LockoutTicket> {
    if (this.#settings.mode !== 'enforce' || this.#closed) return this.#known.admit(peer, name, salt);
    const attempt = ++this.#next;
    const { threshold, maxObjects, maxLifetimeMs } = this.#settings;
    const locked = await new Promise<boolean | undefined>((resolve) => {
      this.#waiting.set(attempt, resolve);
      const known = this.#known.failuresOf(peer, name, salt);
      if (!this.#send({ divan: 'lockout-admit', attempt, peer, name, salt, known, settings: { threshold, maxObjects, maxLifetimeMs } })) this.close();
    });
    // No primary any more: decided here.
    if (locked === undefined) return this.#known.admit(peer, name, salt);
    if (locked) return lockedTicket;
    return admittedTicket((failed) => {
      this.#send({ divan: 'lockout-settle', attempt, failed });
      // Counted here and told to the siblings and other nodes before the 401 goes out.
      if (failed) this.#known.recordFailure(peer, name, salt);
    });
  }

  /** Stops asking the primary: waiting and later attempts are decided by this worker alone. */
  close(): void {
    this.#closed = true;
    for (const resolve of this.#waiting.values()) resolve(undefined);
    this.#waiting.clear();
  }

  #send(message: LockoutRequest): boolean {
    try {
      this.#channel.send(message);
      return true;
    } catch {
      return false;
    }
  }
}

/** A refused attempt: it ends with its 403 and counts nothing. */
const lockedTicket: LockoutTicket = { locked: true, settle: () => undefined };
