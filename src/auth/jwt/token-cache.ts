/**
 * A bounded LRU of tokens that passed every check, so a client repeating its RS256/ES256 token
 * pays for one signature verification, not one per request. Entries are keyed by the SHA-256 of
 * the token (the cache never holds a usable token), never outlive the token's `exp` nor a
 * maximum age, and the owner clears the whole cache on any `[jwt_keys]`/`[jwt_auth]` change.
 *
 * @module
 */
import { sha256Text } from '../../crypto/crypto.js';
import type { UserCtx } from '../../identity/user-ctx.js';
import { isFiniteNumber } from './claims.js';

interface Entry {
  name: string;
  roles: readonly string[];
  /** Milliseconds; the entry answers while `now < expiresAtMs`. */
  expiresAtMs: number;
}

export class TokenCache {
  readonly #maxEntries: number;
  readonly #maxAgeMs: number;
  readonly #entries = new Map<string, Entry>();

  /**
   * @param maxEntries 0 disables the cache
   * @param maxAgeMs how long an entry may answer at most, whatever the token's `exp`
   */
  constructor(maxEntries: number, maxAgeMs: number) {
    this.#maxEntries = Math.max(0, maxEntries);
    this.#maxAgeMs = Math.max(0, maxAgeMs);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The user of a cached, still valid token, as a fresh copy; `undefined` otherwise. */
  get(token: string, nowMs: number): UserCtx | undefined {
    if (this.#maxEntries === 0) return undefined;
    const digest = tokenDigest(token);
    const entry = this.#entries.get(digest);
    if (entry === undefined) return undefined;
    this.#entries.delete(digest);
    if (!(nowMs < entry.expiresAtMs)) return undefined;
    this.#entries.set(digest, entry);
    return { name: entry.name, roles: [...entry.roles] };
  }

  /**
   * Remembers a token that was just accepted at `nowMs`. `exp` is the token's claim as sent: when
   * it is a number the entry ends at `exp` seconds, which is exactly when a strict `exp > now`
   * check would start refusing it (earlier for a fractional `exp`, never later).
   */
  set(token: string, userCtx: UserCtx, nowMs: number, exp: unknown): void {
    if (this.#maxEntries === 0 || userCtx.name === null) return;
    let expiresAtMs = nowMs + this.#maxAgeMs;
    if (isFiniteNumber(exp)) expiresAtMs = Math.min(expiresAtMs, exp * 1000);
    if (!(nowMs < expiresAtMs)) return;
    const digest = tokenDigest(token);
    this.#entries.delete(digest);
    this.#entries.set(digest, { name: userCtx.name, roles: Object.freeze([...userCtx.roles]), expiresAtMs });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}

export function tokenDigest(token: string): string {
  return sha256Text(token, 'base64url');
}
