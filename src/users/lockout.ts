import type { Config } from '../config/config.js';
import { flatCopy } from '../json/flat-copy.js';

/**
 * `[chttpd_auth_lockout]`: after `threshold` failed password checks from one client address for one
 * user and password generation (salt), further attempts are refused until `max_lifetime` has passed
 * since the first failure. Keyed by address, name and salt as CouchDB 3.4, so a password change
 * resets it and one client cannot lock a user out for everyone.
 *
 * Attempts still being checked count too (see `admit`): CouchDB only counts an attempt once its
 * PBKDF2 has finished, so twenty guesses sent at once were all checked.
 */
export type LockoutMode = 'off' | 'warn' | 'enforce';

export interface LockoutSettings {
  mode: LockoutMode;
  threshold: number;
  maxObjects: number;
  maxLifetimeMs: number;
}

/** The place an admitted attempt holds until it has a verdict. */
export interface LockoutTicket {
  /** The threshold is reached: `enforce` refuses the attempt, `warn` only logs it. */
  readonly locked: boolean;
  /** Ends the attempt, exactly once: a failure is counted; any other end only frees its place. */
  settle(failed: boolean): void;
}

/**
 * What the password check needs from a lockout: the `Lockout` below in a single process, the
 * primary's node-wide one through `IpcLockout` (cluster/ipc-lockout.ts) in a worker process.
 */
export interface LockoutGate {
  readonly mode: LockoutMode;
  /**
   * No failure is known for this key: a right password verified before anything yields (a cached
   * one) needs no admission, as it could have come before any attempt still in flight.
   */
  admitsAtOnce(peer: string, name: string, salt: string): boolean;
  /** The ticket of an attempt `admitsAtOnce` let through: a failure still counts. */
  unreserved(peer: string, name: string, salt: string): LockoutTicket;
  /** `admit`'s decision when it is known at once; undefined, with nothing reserved, otherwise. */
  admitNow(peer: string, name: string, salt: string): LockoutTicket | undefined;
  admit(peer: string, name: string, salt: string): Promise<LockoutTicket>;
  configure(settings: LockoutSettings): void;
  recordRemoteFailure(peer: string, name: string, salt: string): void;
  onLocalFailure: ((peer: string, name: string, salt: string) => void) | undefined;
  /** The failures counted here, for a process that starts later (a replacement worker). */
  snapshot(): LockoutSnapshot;
  /** Takes over a sibling's failures where they are more than those counted here. */
  merge(snapshot: LockoutSnapshot): void;
}

/** Failures as `[key, failures, age in ms]` rows; the key is opaque outside this file. */
export type LockoutSnapshot = [string, number, number][];

export function asLockoutSnapshot(value: unknown): LockoutSnapshot {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (row): row is [string, number, number] =>
      Array.isArray(row) && row.length === 3 && typeof row[0] === 'string' && Number.isSafeInteger(row[1]) && row[1] > 0 && Number.isFinite(row[2]) && row[2] >= 0,
  );
}

export function lockoutMode(value: string): LockoutMode {
  return value === 'warn' || value === 'enforce' ? value : 'off';
}

/** `[chttpd_auth_lockout]` as the Lockout uses it. */
export function lockoutSettings(config: Config): LockoutSettings {
  return {
    mode: lockoutMode(config.getString('chttpd_auth_lockout', 'mode')),
    threshold: config.getInteger('chttpd_auth_lockout', 'threshold'),
    maxObjects: config.getInteger('chttpd_auth_lockout', 'max_objects'),
    maxLifetimeMs: config.getInteger('chttpd_auth_lockout', 'max_lifetime'),
  };
}

export class Lockout implements LockoutGate {
  #settings: LockoutSettings;
  readonly #now: () => number;
  readonly #entries = new Map<string, { failures: number; firstFailure: number }>();
  /** Attempts admitted and not settled yet, and the attempts waiting for them to settle. */
  readonly #inFlight = new Map<string, { count: number; waiters: (() => void)[] }>();

  constructor(settings: LockoutSettings, now: () => number = Date.now) {
    this.#settings = settings;
    this.#now = now;
  }

  configure(settings: LockoutSettings): void {
    this.#settings = settings;
  }

  get mode(): LockoutMode {
    return this.#settings.mode;
  }

  /** True when this client has reached the threshold for this user and password generation. */
  isLocked(peer: string, name: string, salt: string): boolean {
    if (this.#settings.mode === 'off') return false;
    return this.#failures(lockoutKey(peer, name, salt)) >= this.#settings.threshold;
  }

  /**
   * The lockout check of one password attempt. In `enforce` mode an attempt still being checked
   * counts as a possible failure: once recorded failures plus attempts in flight reach the
   * threshold, a new attempt waits for those to settle and is then judged on what they recorded.
   * Concurrent attempts therefore get exactly the answers they would get one after another (the
   * sixth of twenty simultaneous guesses is refused like the sixth of twenty sequential ones),
   * while concurrent right passwords only wait for each other, never for a lock.
   */
  async admit(peer: string, name: string, salt: string, known = 0): Promise<LockoutTicket> {
    for (;;) {
      const ticket = this.admitNow(peer, name, salt, known);
      if (ticket !== undefined) return ticket;
      const flight = this.#inFlight.get(lockoutKey(peer, name, salt))!;
      await new Promise<void>((wake) => flight.waiters.push(wake));
    }
  }

  /**
   * `admit`'s decision when it needs no waiting (the common case); undefined, with nothing
   * reserved, when the attempt would have to wait for attempts in flight to settle. `known`:
   * failures counted elsewhere that this lockout may not have heard of (the primary's lockout is
   * told the asking worker's count, which includes other nodes' failures).
   */
  admitNow(peer: string, name: string, salt: string, known = 0): LockoutTicket | undefined {
    if (this.#settings.mode !== 'enforce') return this.#ticket(peer, name, salt, this.isLocked(peer, name, salt));
    const key = lockoutKey(peer, name, salt);
    const failures = Math.max(this.#failures(key), known);
    if (failures >= this.#settings.threshold) return this.#ticket(peer, name, salt, true);
    const flight = this.#inFlight.get(key);
    if (flight === undefined || failures + flight.count < this.#settings.threshold) return this.#reserve(key, peer, name, salt);
    return undefined;
  }

  /**
   * No failure recorded and no attempt in flight: any attempt is admitted at once, unlocked. One
   * whose verdict then comes before anything yields (a cached password) needs no place held: no
   * other attempt can see it in flight. It takes `unreserved()`'s ticket instead.
   */
  get idle(): boolean {
    return this.#entries.size === 0 && this.#inFlight.size === 0 && this.#settings.threshold > 0;
  }

  admitsAtOnce(): boolean {
    return this.idle;
  }

  /** Failures counted for this key and not yet expired. */
  failuresOf(peer: string, name: string, salt: string): number {
    return this.#failures(lockoutKey(peer, name, salt));
  }

  /** The ticket of an attempt decided while `idle`, before anything yielded: a failure still counts. */
  unreserved(peer: string, name: string, salt: string): LockoutTicket {
    return this.#ticket(peer, name, salt, false);
  }

  #reserve(key: string, peer: string, name: string, salt: string): LockoutTicket {
    let flight = this.#inFlight.get(key);
    if (flight === undefined) {
      flight = { count: 0, waiters: [] };
      // No flat copy (unlike #count's entries): this entry goes with the last attempt in flight,
      // and those attempts hold their requests anyway.
      this.#inFlight.set(key, flight);
    }
    flight.count++;
    const reserved = flight;
    return admittedTicket((failed) => {
      if (failed) this.recordFailure(peer, name, salt);
      reserved.count--;
      if (reserved.count === 0 && this.#inFlight.get(key) === reserved) this.#inFlight.delete(key);
      // Everyone waiting decides again on what is known now.
      for (const wake of reserved.waiters.splice(0)) wake();
    });
  }

  #ticket(peer: string, name: string, salt: string, locked: boolean): LockoutTicket {
    return { locked, settle: (failed) => (failed ? this.recordFailure(peer, name, salt) : undefined) };
  }

  #failures(key: string): number {
    const entry = this.#entries.get(key);
    if (!entry) return 0;
    if (this.#now() - entry.firstFailure >= this.#settings.maxLifetimeMs) {
      this.#entries.delete(key);
      return 0;
    }
    return entry.failures;
  }

  /** Called for every failure recorded here (not for remote ones), so other nodes can count it too. */
  onLocalFailure: ((peer: string, name: string, salt: string) => void) | undefined;

  recordFailure(peer: string, name: string, salt: string): void {
    if (this.#settings.mode === 'off') return;
    this.#count(peer, name, salt);
    this.onLocalFailure?.(peer, name, salt);
  }

  /** A failure another node saw: counted here so that guesses spread over nodes still lock. */
  recordRemoteFailure(peer: string, name: string, salt: string): void {
    if (this.#settings.mode === 'off') return;
    this.#count(peer, name, salt);
  }

  #count(peer: string, name: string, salt: string): void {
    const key = lockoutKey(peer, name, salt);
    const now = this.#now();
    const entry = this.#entries.get(key);
    if (entry && now - entry.firstFailure < this.#settings.maxLifetimeMs) {
      entry.failures++;
      return;
    }
    this.#entries.delete(key);
    this.#entries.set(flatCopy(key), { failures: 1, firstFailure: now });
    this.#evictOldest();
  }

  get size(): number {
    return this.#entries.size;
  }

  snapshot(): LockoutSnapshot {
    const now = this.#now();
    return [...this.#entries].map(([key, entry]) => [key, entry.failures, now - entry.firstFailure]);
  }

  merge(snapshot: LockoutSnapshot): void {
    if (this.#settings.mode === 'off') return;
    const now = this.#now();
    for (const [key, failures, ageMs] of snapshot) {
      if (ageMs >= this.#settings.maxLifetimeMs || failures <= this.#failures(key)) continue;
      this.#entries.delete(key);
      this.#entries.set(flatCopy(key), { failures, firstFailure: now - ageMs });
    }
    this.#evictOldest();
  }

  #evictOldest(): void {
    while (this.#entries.size > this.#settings.maxObjects) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
  }
}

/** The ticket of an admitted attempt that holds a place: `end` runs once, at the first `settle`. */
export function admittedTicket(end: (failed: boolean) => void): LockoutTicket {
  let settled = false;
  return {
    locked: false,
    settle: (failed) => {
      if (settled) return;
      settled = true;
      end(failed);
    },
  };
}

function lockoutKey(peer: string, name: string, salt: string): string {
  return `${peer}\u0000${name}\u0000${salt}`;
}
