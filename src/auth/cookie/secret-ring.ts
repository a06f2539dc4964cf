/**
 * The cookie secrets in force: the current `[chttpd_auth] secret` plus the ones it replaced
 * recently. CouchDB 3.5.2 (`couch_secrets`) keeps a replaced secret valid for `timeout` seconds so
 * that a rotation does not log everybody out; before 3.5.2 a rotation invalidated every cookie.
 *
 * @module
 */

interface RetiredSecret {
  secret: string;
  /** Milliseconds on the injected clock; valid while `now < expiresAtMs`. */
  expiresAtMs: number;
}

export class SecretRing {
  readonly #now: () => number;
  #current: string | undefined;
  #retired: RetiredSecret[] = [];

  /**
   * @param now the clock, milliseconds since the epoch
   * @param initial the secret in force at start-up; `''` counts as none
   */
  constructor(now: () => number, initial?: string) {
    this.#now = now;
    this.#current = initial === '' ? undefined : initial;
  }

  /** The signing secret, or `undefined` while none is configured. */
  current(): string | undefined {
    return this.#current;
  }

  /**
   * Installs `next` (`undefined` or `''`: no secret) and keeps the replaced secret valid for
   * `graceSeconds` more. Setting the same secret again changes nothing.
   */
  rotate(next: string | undefined, graceSeconds: number): void {
    const incoming = next === '' ? undefined : next;
    if (incoming === this.#current) return;
    const now = this.#now();
    this.#prune(now);
    const old = this.#current;
    this.#current = incoming;
    this.#retired = this.#retired.filter((entry) => entry.secret !== incoming);
    if (old === undefined || !(graceSeconds > 0)) return;
    const expiresAtMs = now + graceSeconds * 1000;
    const earlier = this.#retired.find((entry) => entry.secret === old);
    this.#retired = this.#retired.filter((entry) => entry !== earlier);
    this.#retired.push({ secret: old, expiresAtMs: Math.max(earlier?.expiresAtMs ?? 0, expiresAtMs) });
  }

  /**
   * Secrets a cookie may be verified with: the current one first, then replaced ones still in
   * their grace period, newest first. Empty while no secret is configured, because CouchDB ignores
   * every cookie then (docs/authentication.md, "Cookie validation", rule 3), and removing the secret is how an operator ends
   * all sessions.
   */
  valid(): string[] {
    if (this.#current === undefined) return [];
    this.#prune(this.#now());
    const secrets = [this.#current];
    for (let i = this.#retired.length - 1; i >= 0; i--) {
      const { secret } = this.#retired[i];
      if (!secrets.includes(secret)) secrets.push(secret);
    }
    return secrets;
  }

  #prune(now: number): void {
    this.#retired = this.#retired.filter((entry) => now < entry.expiresAtMs);
  }
}
