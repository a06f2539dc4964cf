import { malformedCookie } from '../../errors/catalog.js';
import type { KnownUser, PasswordChecker } from '../../identity/password-checker.js';
import { parseBasicHeader } from '../basic-header.js';
import type { AuthHandler, AuthOutcome, AuthRequest } from '../types.js';
import { decodeCookieValue, firstAuthSessionCookie, isExpired, parseTimeHex, verifyCookieMac } from './codec.js';
import type { CookieService } from './cookie-service.js';
import { flatCopy } from '../../json/flat-copy.js';

/**
 * `cookie_authentication_handler`: a valid AuthSession cookie authenticates without a password.
 * Expired, tampered or unknown-user cookies fall through silently (the request may still carry
 * Basic credentials); only an undecodable cookie is an error, as in CouchDB.
 */
export class CookieHandler implements AuthHandler {
  readonly name = 'cookie';
  readonly #cookies: CookieService;
  readonly #authenticator: PasswordChecker;

  /**
   * Cookies whose MAC has been checked, so a repeated cookie costs no HMAC. An entry is only a
   * shortcut for the MAC: expiry, the user's current salt (password changes, deletion) and Basic
   * precedence are checked on every request, and any change of secret or algorithms
   * (`generation`) makes every entry stale.
   */
  readonly #verified = new Map<string, VerifiedCookie>();

  constructor(cookies: CookieService, authenticator: PasswordChecker) {
    this.#cookies = cookies;
    this.#authenticator = authenticator;
  }

  /** A cookie whose MAC was checked before: without a promise while the user is in memory. */
  #fromVerified(request: AuthRequest, value: string, known: VerifiedCookie): AuthOutcome | Promise<AuthOutcome> {
    if (parseBasicHeader(request.headers.authorization).kind === 'credentials') return undefined;
    if (isExpired(known.issuedAt, this.#cookies.nowSeconds(), this.#cookies.timeoutSeconds())) {
      this.#verified.delete(value);
      return undefined;
    }
    const credentials = this.#authenticator.resolve(known.name);
    return credentials instanceof Promise
      ? credentials.then((current) => this.#stillValid(value, known, current))
      : this.#stillValid(value, known, credentials);
  }

  /** The user still exists with the salt the cookie was signed with (no password change since). */
  #stillValid(value: string, known: VerifiedCookie, credentials: KnownUser | undefined): AuthOutcome {
    if (!credentials || credentials.hash.salt !== known.salt) {
      this.#verified.delete(value);
      return undefined;
    }
    return {
      userCtx: { name: known.name, roles: credentials.roles },
      cookieSubject: { name: known.name, salt: known.salt, issuedAt: known.issuedAt },
    };
  }

  #remember(value: string, entry: VerifiedCookie): void {
    this.#verified.set(flatCopy(value), entry);
    if (this.#verified.size > MAX_VERIFIED_COOKIES) this.#verified.delete(this.#verified.keys().next().value as string);
  }

  mayAnswer(request: AuthRequest): boolean {
    return request.headers.cookie !== undefined;
  }

  /** The cookie's issue time plus `[chttpd_auth] timeout`. */
  credentialExpiry(_request: AuthRequest, outcome: NonNullable<AuthOutcome>): number | undefined {
    const issuedAt = outcome.cookieSubject?.issuedAt;
    return issuedAt === undefined ? undefined : (issuedAt + this.#cookies.timeoutSeconds()) * 1000;
  }

  authenticate(request: AuthRequest): AuthOutcome | Promise<AuthOutcome> {
    const value = firstAuthSessionCookie(headerText(request.headers.cookie));
    if (value === undefined || value === '') return undefined;
    const known = this.#verified.get(value);
    if (known !== undefined && known.generation === this.#cookies.generation) return this.#fromVerified(request, value, known);
    return this.#verify(request, value);
  }

  async #verify(request: AuthRequest, value: string): Promise<AuthOutcome> {
    const decoded = decodeCookieValue(value);
    if (decoded.kind === 'malformed') throw malformedCookie();
    if (decoded.kind !== 'token') return undefined;
    // Explicit Basic credentials decide over a (well-formed) cookie. PouchDB and nano keep one
    // cookie jar per process, and Basic responses carry a cookie (docs/authentication.md, "Basic
    // responses carry a cookie"): letting a stored cookie of one user answer for a request that
    // names another, or hide a wrong password, would be wrong either way.
    if (parseBasicHeader(request.headers.authorization).kind === 'credentials') return undefined;
    const secrets = await this.#cookies.verificationSecrets();
    if (secrets.length === 0) return undefined;
    const credentials = await this.#authenticator.resolve(decoded.name);
    if (!credentials) return undefined;
    const issuedAt = parseTimeHex(decoded.timeHex);
    if (issuedAt === undefined) return undefined;
    if (isExpired(issuedAt, this.#cookies.nowSeconds(), this.#cookies.timeoutSeconds())) return undefined;
    if (!verifyCookieMac(decoded, secrets, credentials.hash.salt, this.#cookies.algorithms())) return undefined;
    // While a replaced secret is still in its grace period, the entry could outlive that secret:
    // such cookies are verified every time instead.
    if (secrets.length === 1) this.#remember(value, { name: decoded.name, issuedAt, salt: credentials.hash.salt, generation: this.#cookies.generation });
    return {
      userCtx: { name: decoded.name, roles: credentials.roles },
      cookieSubject: { name: decoded.name, salt: credentials.hash.salt, issuedAt },
    };
  }
}

const MAX_VERIFIED_COOKIES = 10000;

interface VerifiedCookie {
  name: string;
  issuedAt: number;
  salt: string;
  generation: number;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join('; ') : value;
}
