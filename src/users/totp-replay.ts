/**
 * Refuses a TOTP code that has already logged in (beyond CouchDB, which accepts a code as often as
 * it likes for 90 seconds): per user name and password salt, the highest time step accepted so
 * far; a code whose step is not above it is a replay. Codes of earlier steps fall with it, so a
 * code seen over someone's shoulder is useless once its owner has logged in with a later one.
 *
 * In memory and per node. Bounded: beyond `maxEntries`, the users who logged in longest ago are
 * forgotten first; their codes have normally expired already (a step is accepted for at most
 * 90 seconds).
 */
export class TotpReplayGuard {
  readonly #maxEntries: number;
  readonly #lastCounters = new Map<string, number>();

  constructor(maxEntries = 10000) {
    this.#maxEntries = Math.max(1, maxEntries);
  }

  /**
   * Records `counter` as used by this user and password generation, and returns true, unless
   * that step or a later one was used before (then false, and nothing changes). Synchronous, so
   * two concurrent logins with one code cannot both pass.
   */
  accept(name: string, salt: string, counter: number): boolean {
    // Unambiguous whatever the name holds (a plain separator could be part of a name).
    const key = JSON.stringify([name, salt]);
    const last = this.#lastCounters.get(key);
    if (last !== undefined && counter <= last) return false;
    // Re-inserted so that the map stays ordered by last use.
    this.#lastCounters.delete(key);
    this.#lastCounters.set(key, counter);
    while (this.#lastCounters.size > this.#maxEntries) {
      this.#lastCounters.delete(this.#lastCounters.keys().next().value as string);
    }
    return true;
  }

  get size(): number {
    return this.#lastCounters.size;
  }
}
