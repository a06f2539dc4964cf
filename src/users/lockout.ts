import type { Config } from '../config/config.js';

/**
 * `[chttpd_auth_lockout]`: after `threshold` failed password checks from one client address for one
 * user and password generation (salt), further attempts are refused until `max_lifetime` has passed
 * since the first failure. Keyed by address, name and salt as CouchDB 3.4, so a password change
 * resets it and one client cannot lock a user out for everyone.
 */
export type LockoutMode = 'off' | 'warn' | 'enforce';

export interface LockoutSettings {
  mode: LockoutMode;
  threshold: number;
  maxObjects: number;
  maxLifetimeMs: number;
}

export function lockoutMode(value: string): LockoutMode {
  return value === 'warn' || value === 'enforce' ? value : 'off';
}

/** `[chttpd_auth_lockout]` as the Lockout uses it. */
export function lockoutSettings(config: Config): LockoutSettings {
  return {
    mode: lockoutMode(config.getString('chttpd_auth_lockout', 'mode', 'enforce')),
    threshold: config.getInteger('chttpd_auth_lockout', 'threshold', 5),
    maxObjects: config.getInteger('chttpd_auth_lockout', 'max_objects', 10000),
    maxLifetimeMs: config.getInteger('chttpd_auth_lockout', 'max_lifetime', 300000),
  };
}

export class Lockout {
  #settings: LockoutSettings;
  readonly #now: () => number;
  readonly #entries = new Map<string, { failures: number; firstFailure: number }>();

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
    const key = lockoutKey(peer, name, salt);
    const entry = this.#entries.get(key);
    if (!entry) return false;
    if (this.#now() - entry.firstFailure >= this.#settings.maxLifetimeMs) {
      this.#entries.delete(key);
      return false;
    }
    return entry.failures >= this.#settings.threshold;
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
    while (this.#entries.size > this.#settings.maxObjects) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}

function lockoutKey(peer: string, name: string, salt: string): string {
  return `${peer}\u0000${name}\u0000${salt}`;
}

/**
 * A flat copy of a string. A key cut out of a request string (a V8 sliced string) keeps the whole
 * request string alive for as long as the entry lives: a 60 KiB header per entry, or the password
 * of a Basic header. Lossless for any UTF-16, lone surrogates included.
 */
function flatCopy(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}
