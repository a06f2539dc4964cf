import type { Config } from '../../config/config.js';
import { constantTimeEqual, hmac } from '../../crypto/crypto.js';
import { COUCH_HASH_ALGORITHMS } from '../../crypto/hash-algorithms.js';
import type { Logger } from '../../log/logger.js';
import type { AuthHandler, AuthOutcome, AuthRequest, SigningSecrets } from '../types.js';

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/** Splits the roles header on commas; surrounding whitespace and empty entries are dropped. */
export function parseProxyRoles(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header.split(',').map((role) => role.trim()).filter((role) => role !== '');
}

/**
 * True when `token` is the hex HMAC of `name` under one of the secrets with one of the
 * algorithms. Hex is decoded (either case, as CouchDB 3.5.2) and compared in constant time; a
 * missing or non-hex token simply does not verify (CouchDB 3.5.2 answers 500 there).
 */
export function verifyProxyToken(name: string, token: string | undefined, secrets: readonly string[], algorithms: readonly string[]): boolean {
  if (token === undefined || !HEX.test(token)) return false;
  const presented = Buffer.from(token, 'hex');
  let verified = false;
  for (const secret of secrets) {
    for (const algorithm of algorithms) {
      const digest = COUCH_HASH_ALGORITHMS.get(algorithm);
      if (digest === undefined) continue;
      // No early exit: the time taken does not tell which secret or algorithm matched.
      if (constantTimeEqual(hmac(digest, secret, name), presented)) verified = true;
    }
  }
  return verified;
}

/**
 * `proxy_authentication_handler`: a trusted reverse proxy names the user and roles in headers.
 * With `proxy_use_secret`, the token header must carry the HMAC of the name under the secret; a
 * wrong or missing token passes the request on (the next handler may still authenticate it).
 */
export class ProxyHandler implements AuthHandler {
  readonly name = 'proxy';
  readonly #config: Config;
  readonly #secrets: SigningSecrets;
  readonly #log: Logger;
  /** Set once the missing secret has been logged; cleared when a secret appears. */
  #reportedNoSecret = false;

  constructor(config: Config, secrets: SigningSecrets, log: Logger) {
    this.#config = config;
    this.#secrets = secrets;
    this.#log = log;
  }

  mayAnswer(request: AuthRequest): boolean {
    return this.#header(request, 'x_auth_username') !== undefined;
  }

  /** Without a promise while the signing secrets are in memory: a proxy sends its headers on every request. */
  authenticate(request: AuthRequest): AuthOutcome | Promise<AuthOutcome> {
    const name = this.#header(request, 'x_auth_username');
    if (name === undefined) return undefined;
    if (!this.#config.authBoolean('proxy_use_secret')) return this.#outcome(request, name);
    const secrets = this.#secrets.verificationSecrets();
    return secrets instanceof Promise ? secrets.then((loaded) => this.#signed(request, name, loaded)) : this.#signed(request, name, secrets);
  }

  #signed(request: AuthRequest, name: string, secrets: readonly string[]): AuthOutcome {
    // CouchDB believes the headers without a token until a secret exists (the first login makes
    // one): anyone could be `_admin` meanwhile. No secret means no token can verify.
    if (secrets.length === 0) {
      this.#reportNoSecret();
      return undefined;
    }
    this.#reportedNoSecret = false;
    const token = this.#header(request, 'x_auth_token');
    return this.#verified(name, token, secrets) ? this.#outcome(request, name) : undefined;
  }

  #outcome(request: AuthRequest, name: string): AuthOutcome {
    return { userCtx: { name, roles: parseProxyRoles(this.#header(request, 'x_auth_roles')) } };
  }

  #reportNoSecret(): void {
    if (this.#reportedNoSecret) return;
    this.#reportedNoSecret = true;
    this.#log.warning(
      'proxy authentication refused: [chttpd_auth] proxy_use_secret = true but no [chttpd_auth] secret is set yet; ' +
        'set one (or log in once through /_session to generate it)',
    );
  }

  /**
   * Tokens that verified, per name, so a proxy that sends the same token on every request costs
   * one HMAC per secret change, not one per request. Only successes are remembered (a flood of
   * wrong tokens cannot grow it past its bound), and every secret or algorithm change starts over.
   * While a rotated secret is in its grace period nothing is remembered, so the old secret's
   * tokens stop working when it expires.
   */
  readonly #known = new Map<string, number>();

  #verified(name: string, token: string | undefined, secrets: readonly string[]): boolean {
    if (token === undefined) return false;
    const key = `${name}\u0000${token.toLowerCase()}`;
    if (this.#known.get(key) === this.#secrets.generation) return true;
    if (!verifyProxyToken(name, token, secrets, this.#secrets.algorithms())) return false;
    if (secrets.length === 1) {
      this.#known.set(key, this.#secrets.generation);
      if (this.#known.size > 10000) this.#known.delete(this.#known.keys().next().value as string);
    }
    return true;
  }

  /** Header names as configured, lower-cased once (Node's header keys are lower case). */
  readonly #lowerCase = new Map<string, string>();

  #header(request: AuthRequest, setting: 'x_auth_username' | 'x_auth_roles' | 'x_auth_token'): string | undefined {
    const configured = this.#config.authString(setting);
    let name = this.#lowerCase.get(configured);
    if (name === undefined) {
      // Three settings: a handful of names over the server's life, cleared for good measure.
      if (this.#lowerCase.size > 100) this.#lowerCase.clear();
      this.#lowerCase.set(configured, (name = configured.toLowerCase()));
    }
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  }
}
