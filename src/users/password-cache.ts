import { HitCounts } from '../metrics/hit-counts.js';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/config.js';
import { keyedSha256, storedDigestEquals } from '../crypto/crypto.js';
import { flatCopy } from '../json/flat-copy.js';

/**
 * Remembers passwords that passed the slow PBKDF2 check, as a keyed fast hash, so repeated Basic
 * requests cost microseconds (CouchDB 3.4's `couch_passwords_cache`). One entry per user name,
 * valid only under the salt it was verified with, so a password change (new salt) never meets a
 * stale entry: it is a miss, never a wrong password. The digest is a
 * SHA-256 under a random key that lives only in this process: entries are never written anywhere
 * and mean nothing to another process (someone who can read this process's memory could also read
 * passwords as they arrive, so the cache adds no new exposure there).
 */
export class VerifiedPasswordCache {
  /** Lookups that found a verified password (the hash was skipped) and those that did not. */
  readonly counts = new HitCounts();
  readonly #key = randomBytes(32).toString('hex');
  /** Where a presented password's digest is compared (checks are synchronous, so one serves all). */
  readonly #scratch = Buffer.alloc(DIGEST_BYTES);
  readonly #entries = new Map<string, Entry>();
  /** The entry last in `#entries`' order, when still there: a repeated hit on it needs no re-insert. */
  #newest: Entry | undefined;
  #maxObjects: number;
  #maxIdleMs: number;
  #enabled: boolean;
  readonly #now: () => number;

  constructor(options: { enabled: boolean; maxObjects: number; maxIdleMs: number; now?: () => number }) {
    this.#enabled = options.enabled;
    this.#maxObjects = options.maxObjects;
    this.#maxIdleMs = options.maxIdleMs;
    this.#now = options.now ?? Date.now;
  }

  configure(options: { enabled: boolean; maxObjects: number; maxIdleMs: number }): void {
    this.#enabled = options.enabled;
    this.#maxObjects = options.maxObjects;
    this.#maxIdleMs = options.maxIdleMs;
    if (!this.#enabled) this.#entries.clear();
  }

  /** true: the password matches a verified one; false: it does not; undefined: nothing cached. */
  check(name: string, salt: string, password: string): boolean | undefined {
    if (!this.#enabled) return undefined;
    // Looked up with the plain (possibly sliced) string; only a stored key needs the flat copy.
    const stored = this.#entries.get(name);
    // An entry verified under another salt (an older password) is no entry.
    const entry = stored !== undefined && stored.salt === salt ? stored : undefined;
    const now = this.#now();
    const fresh = entry !== undefined && now - entry.lastUsed <= this.#maxIdleMs;
    this.counts.record(fresh);
    if (!entry) return undefined;
    if (!fresh) {
      this.#entries.delete(entry.key);
      return undefined;
    }
    entry.lastUsed = now;
    if (entry !== this.#newest) {
      // Re-insert so Map order stays least-recently-used first.
      this.#entries.delete(entry.key);
      this.#entries.set(entry.key, entry);
      this.#newest = entry;
    }
    return storedDigestEquals(entry.digest, this.#digest(salt, password), this.#scratch);
  }

  remember(name: string, salt: string, password: string): void {
    if (!this.#enabled || this.#maxObjects <= 0) return;
    const cacheKey = flatCopy(name);
    this.#entries.delete(cacheKey);
    // A buffer of its own: one cut from Node's shared pool would keep the whole pool slab alive.
    const digest = Buffer.alloc(DIGEST_BYTES);
    digest.write(this.#digest(salt, password), 'latin1');
    this.#newest = { key: cacheKey, salt, digest, lastUsed: this.#now() };
    this.#entries.set(cacheKey, this.#newest);
    while (this.#entries.size > this.#maxObjects) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  /** Drops the entry of a user (password change, deletion). */
  forget(name: string): void {
    this.#entries.delete(name);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The digest's 32 bytes as latin1 text. */
  #digest(salt: string, password: string): string {
    return keyedSha256(this.#key, `${salt}\u0000${password}`, 'latin1');
  }
}

const DIGEST_BYTES = 32;

/** One per user name: the salt the password was verified under, and its keyed digest. */
interface Entry {
  key: string;
  salt: string;
  digest: Buffer;
  lastUsed: number;
}


/** `[couch_passwords_cache]` as the cache uses it. */
export function passwordCacheSettings(config: Config): { enabled: boolean; maxObjects: number; maxIdleMs: number } {
  return {
    enabled: config.getBoolean('couch_passwords_cache', 'enable'),
    maxObjects: config.getInteger('couch_passwords_cache', 'max_objects'),
    maxIdleMs: config.getInteger('couch_passwords_cache', 'max_idle'),
  };
}
