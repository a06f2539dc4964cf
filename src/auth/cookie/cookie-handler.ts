import { malformedCookie } from '../../errors/catalog.js';
import type { PasswordAuthenticator } from '../../users/password-authenticator.js';
import { parseBasicHeader } from '../basic/parse.js';
import type { AuthHandler, AuthOutcome, AuthRequest } from '../types.js';
import { decodeCookieValue, firstAuthSessionCookie, isExpired, parseTimeHex, verifyCookieMac } from './codec.js';
import type { CookieService } from './cookie-service.js';


/**
 * `cookie_authentication_handler`: a valid AuthSession cookie authenticates without a password.
 * Expired, tampered or unknown-user cookies fall through silently (the request may still carry
 * Basic credentials); only an undecodable cookie is an error, as in CouchDB.
 */
export class CookieHandler implements AuthHandler {
  readonly name = 'cookie';
  readonly #cookies: CookieService;
  readonly #authenticator: PasswordAuthenticator;

  constructor(cookies: CookieService, authenticator: PasswordAuthenticator) {
    this.#cookies = cookies;
    this.#authenticator = authenticator;
  }

  async authenticate(request: AuthRequest): Promise<AuthOutcome> {
    const value = firstAuthSessionCookie(headerText(request.headers.cookie));
    if (value === undefined || value === '') return undefined;
    const decoded = decodeCookieValue(value);
    if (decoded.kind === 'malformed') throw malformedCookie();
    if (decoded.kind !== 'token') return undefined;
    // Explicit Basic credentials decide over a (well-formed) cookie. PouchDB and nano keep one
    // cookie jar per process, and Basic responses carry a cookie (spec 5.1.3): letting a stored
    // cookie of one user answer for a request that names another, or hide a wrong password, would
    // be wrong either way.
    if (parseBasicHeader(request.headers.authorization).kind === 'credentials') return undefined;
    const secrets = await this.#cookies.verificationSecrets();
    if (secrets.length === 0) return undefined;
    const credentials = await this.#authenticator.resolve(decoded.name);
    if (!credentials) return undefined;
    const issuedAt = parseTimeHex(decoded.timeHex);
    if (issuedAt === undefined) return undefined;
    if (isExpired(issuedAt, this.#cookies.nowSeconds(), this.#cookies.timeoutSeconds())) return undefined;
    if (!verifyCookieMac(decoded, secrets, credentials.hash.salt, this.#cookies.algorithms())) return undefined;
    return {
      userCtx: { name: decoded.name, roles: credentials.roles },
      cookieSubject: { name: decoded.name, salt: credentials.hash.salt, issuedAt },
    };
  }
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join('; ') : value;
}
