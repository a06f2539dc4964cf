import type { Config } from '../../config/config.js';
import { randomHex } from '../../crypto/crypto.js';
import type { Logger } from '../../log/logger.js';
import { mintCookieValue, parseHashAlgorithms } from './codec.js';
import { SecretRing } from './secret-ring.js';
import { authSessionSetCookie, sameSiteAttribute, type CookieSettings } from './set-cookie.js';

/** Where the nodes of a cluster keep a generated secret (see `src/auth/cookie/shared-secret.ts`). */
export interface SharedSecret {
  load(): Promise<string | undefined>;
  /** Stores `candidate` unless a secret exists already; answers the secret that won. */
  loadOrCreate(candidate: string): Promise<string>;
}

/**
 * Everything about AuthSession cookies that depends on configuration: the secret (generated on
 * first use, rotated with a grace period), the algorithms, and the Set-Cookie attributes. Parsed
 * settings are cached and rebuilt only when `[chttpd_auth]` changes, because this runs on every
 * cookie request.
 */
export class CookieService {
  readonly #config: Config;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #ring: SecretRing;
  #algorithms: string[];
  #generating: Promise<string> | undefined;
  readonly #memo = new Map<string, string>();
  /** Bumped whenever the secrets or algorithms change: verified-cookie caches compare it. */
  generation = 0;
  readonly #shared: SharedSecret | undefined;
  #lastSharedLookup = 0;
  #memoSecond = -1;

  constructor(config: Config, log: Logger, now: () => number = Date.now, shared?: SharedSecret) {
    this.#config = config;
    this.#shared = shared;
    this.#log = log;
    this.#now = now;
    this.#ring = new SecretRing(now);
    this.#ring.rotate(this.#configuredSecret(), 0);
    this.#algorithms = parseHashAlgorithms(config.authString('hash_algorithms'));
    config.onChange((change) => {
      if (change.section !== 'chttpd_auth' && change.section !== 'couch_httpd_auth') return;
      this.#memo.clear();
      if (change.key === 'secret' || change.key === 'hash_algorithms') this.generation++;
      if (change.key === 'secret') this.#ring.rotate(this.#configuredSecret(), this.timeoutSeconds());
      if (change.key === 'hash_algorithms') this.#algorithms = parseHashAlgorithms(config.authString('hash_algorithms'));
    });
  }

  #configuredSecret(): string | undefined {
    const secret = this.#config.authString('secret');
    return secret === '' ? undefined : secret;
  }

  timeoutSeconds(): number {
    return Math.max(0, this.#config.authInteger('timeout'));
  }

  nowSeconds(): number {
    return Math.floor(this.#now() / 1000);
  }

  /** Secrets a cookie may be signed with: the current one, then recently replaced ones. */
  secrets(): string[] {
    return this.#ring.valid();
  }

  /**
   * As `secrets()`, but when none is configured on a node of a cluster, first looks for the
   * secret another node generated and stored (at most once a second while there is none).
   */
  verificationSecrets(): string[] | Promise<string[]> {
    if (this.#ring.current() === undefined && this.#shared && this.#now() - this.#lastSharedLookup >= 1000) return this.#loadShared(this.#shared);
    // Without a promise in the common case: a secret is set (proxy tokens are checked on every request).
    return this.#ring.valid();
  }

  async #loadShared(shared: SharedSecret): Promise<string[]> {
    this.#lastSharedLookup = this.#now();
    const stored = await shared.load();
    if (stored !== undefined && this.#ring.current() === undefined) {
      this.#ring.rotate(stored, 0);
      this.generation++;
    }
    return this.#ring.valid();
  }

  /** Forget a failed lookup of the shared secret (another node just stored one). */
  sharedSecretChanged(): void {
    this.#lastSharedLookup = 0;
  }

  algorithms(): readonly string[] {
    return this.#algorithms;
  }

  /** The signing secret, generated and persisted (like CouchDB on its first login) when none is set. */
  async ensureSecret(): Promise<string> {
    const current = this.#ring.current();
    if (current !== undefined) return current;
    this.#generating ??= (async () => {
      if (this.#shared) {
        // Nodes of a cluster share the secret through the store: the first one to need it wins.
        const secret = await this.#shared.loadOrCreate(randomHex());
        if (this.#ring.current() === undefined) {
          this.#ring.rotate(secret, 0);
          this.generation++;
        }
        return secret;
      }
      const secret = randomHex();
      await this.#config.set('chttpd_auth', 'secret', secret);
      return secret;
    })().finally(() => (this.#generating = undefined));
    return this.#generating;
  }

  /** A fresh cookie value for a user, signed with the first of `hash_algorithms`. */
  async mint(name: string, salt: string): Promise<string> {
    const secret = await this.ensureSecret();
    return mintCookieValue(name, this.nowSeconds(), secret, salt, this.#algorithms[0]!);
  }

  /**
   * A complete fresh `Set-Cookie` value for a user. Cookies carry whole seconds, so within one
   * second the same user gets the same header: remembered for that second, because every Basic
   * request asks for one (answered then without a promise).
   */
  freshSetCookie(name: string, salt: string, secureConnection: boolean): string | Promise<string> {
    const second = this.nowSeconds();
    if (second !== this.#memoSecond) {
      this.#memo.clear();
      this.#memoSecond = second;
    }
    const key = `${secureConnection ? 's' : 'p'}\u0000${name}\u0000${salt}`;
    const cached = this.#memo.get(key);
    if (cached !== undefined) return cached;
    return this.mint(name, salt).then((value) => {
      const header = this.setCookie(value, secureConnection);
      // Only while still in the second it was minted for: the memo may have moved on meanwhile.
      if (this.#memoSecond === second && this.#memo.size < 10000) this.#memo.set(key, header);
      return header;
    });
  }

  settings(secureConnection: boolean): CookieSettings {
    const sameSite = this.#config.authString('same_site');
    if (sameSite !== '' && sameSiteAttribute(sameSite) === undefined) {
      this.#log.error(`[chttpd_auth] same_site has an invalid value; SameSite is left out`);
    }
    return {
      timeoutSeconds: this.timeoutSeconds(),
      persistent: this.#config.authBoolean('allow_persistent_cookies'),
      secure: secureConnection || this.#config.authBoolean('secure_cookie'),
      domain: this.#config.authString('cookie_domain'),
      sameSite,
    };
  }

  setCookie(value: string, secureConnection: boolean): string {
    return authSessionSetCookie(value, this.settings(secureConnection), this.#now());
  }

  /** The cleared cookie: an empty value with the same attributes (docs/authentication.md, "The Set-Cookie string"). */
  clearingCookie(secureConnection: boolean): string {
    return this.setCookie('', secureConnection);
  }
}
