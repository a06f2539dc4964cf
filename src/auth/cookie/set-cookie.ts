/**
 * The `Set-Cookie` header for AuthSession, in mochiweb's exact format and attribute order
 * (docs/authentication.md, "The Set-Cookie string"): `AuthSession=<v>; Version=1[; Expires=…; Max-Age=…][; Secure][; Domain=…];
 * Path=/; HttpOnly[; SameSite=…]`. Pure: the clock and the settings are arguments.
 *
 * @module
 */

export interface CookieSettings {
  /** `[chttpd_auth] timeout`, seconds; also the Max-Age of a persistent cookie. */
  timeoutSeconds: number;
  /** `[chttpd_auth] allow_persistent_cookies`: adds Expires and Max-Age. */
  persistent: boolean;
  /** The connection is TLS (or `[chttpd_auth] secure_cookie` forces it). */
  secure: boolean;
  /** `[chttpd_auth] cookie_domain`; `''` means no Domain attribute. */
  domain: string;
  /** `[chttpd_auth] same_site`, raw. */
  sameSite: string;
}

type SameSite = 'None' | 'Lax' | 'Strict';

const SAME_SITE: ReadonlyMap<string, SameSite> = new Map([
  ['none', 'None'],
  ['lax', 'Lax'],
  ['strict', 'Strict'],
]);

/** The SameSite attribute for a raw `same_site` setting (case-insensitive); otherwise `undefined`. */
export function sameSiteAttribute(raw: string): SameSite | undefined {
  return SAME_SITE.get(raw.toLowerCase());
}

/** A non-empty `same_site` that names no SameSite value: CouchDB leaves the attribute out and logs an error. */
export function isInvalidSameSite(raw: string): boolean {
  return raw !== '' && sameSiteAttribute(raw) === undefined;
}

// A host name (optionally with the leading dot of RFC 2109). Anything else could smuggle
// attributes or headers into Set-Cookie; mochiweb would crash on it, we leave Domain out.
const SAFE_DOMAIN = /^[A-Za-z0-9._-]+$/;

/** Whether `cookie_domain` may be written into `Domain=` verbatim. */
export function isSafeCookieDomain(domain: string): boolean {
  return SAFE_DOMAIN.test(domain);
}

// RFC 6265 cookie-octet: visible ASCII except `"`, `,`, `;` and `\`.
const SAFE_VALUE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;

/** Whether a cookie value can be sent without quoting; every minted (base64url) value can. */
export function isSafeCookieValue(value: string): boolean {
  return SAFE_VALUE.test(value);
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number): string => String(n).padStart(2, '0');

/**
 * A date as mochiweb writes cookie expiry: RFC 2109 style with dashes, always GMT.
 *
 * @example cookieExpiresDate(1700000600) // 'Tue, 14-Nov-2023 22:23:20 GMT'
 */
export function cookieExpiresDate(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  return (
    `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${String(d.getUTCFullYear()).padStart(4, '0')} ` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} GMT`
  );
}

/**
 * The full `Set-Cookie` header value. A clearing cookie is `authSessionSetCookie('', …)`: the same
 * attributes with an empty value (CouchDB does not use Max-Age=0). An unsafe `domain` is left out;
 * an unsafe `value` or a non-finite clock is a programming error and throws `TypeError`.
 *
 * @example
 * authSessionSetCookie('v', { timeoutSeconds: 600, persistent: false, secure: false, domain: '', sameSite: '' }, Date.now())
 * // 'AuthSession=v; Version=1; Path=/; HttpOnly'
 */
export function authSessionSetCookie(value: string, settings: CookieSettings, nowMs: number): string {
  if (!isSafeCookieValue(value)) throw new TypeError('AuthSession value contains characters not allowed in a cookie');
  if (!Number.isFinite(nowMs)) throw new TypeError('nowMs must be a finite number of milliseconds');
  let header = `AuthSession=${value}; Version=1`;
  if (settings.persistent) {
    // mochiweb clamps a negative age to 0 and counts from the current whole second.
    const age = Number.isFinite(settings.timeoutSeconds) && settings.timeoutSeconds > 0 ? Math.floor(settings.timeoutSeconds) : 0;
    header += `; Expires=${cookieExpiresDate(Math.floor(nowMs / 1000) + age)}; Max-Age=${age}`;
  }
  if (settings.secure) header += '; Secure';
  if (settings.domain !== '' && isSafeCookieDomain(settings.domain)) header += `; Domain=${settings.domain}`;
  header += '; Path=/; HttpOnly';
  const sameSite = sameSiteAttribute(settings.sameSite);
  if (sameSite !== undefined) header += `; SameSite=${sameSite}`;
  return header;
}
