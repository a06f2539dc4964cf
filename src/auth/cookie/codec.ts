/**
 * The AuthSession token, byte for byte as CouchDB 3.x writes and reads it
 * (docs/authentication.md, "The AuthSession token" and "Cookie validation"):
 * base64url, no padding, of `name:TIMEHEX:` followed by the raw HMAC of `name:TIMEHEX` keyed with
 * `secret ‖ user salt`. Everything here is pure: clock, secrets and settings are arguments.
 *
 * @module
 */
import { createHmac } from 'node:crypto';
import { constantTimeEqual, hmac } from '../../crypto/crypto.js';
import { COUCH_HASH_ALGORITHMS } from '../../crypto/hash-algorithms.js';

const DEFAULT_HASH_ALGORITHM = 'sha256';

// HMAC output length per CouchDB name, or null when this Node/OpenSSL build cannot compute it
// (OpenSSL 3 drops md4 unless the legacy provider is loaded). Probed once, not assumed.
const macLengths = new Map<string, number | null>();

function macLength(algorithm: string): number | undefined {
  const cached = macLengths.get(algorithm);
  if (cached !== undefined) return cached ?? undefined;
  const digest = COUCH_HASH_ALGORITHMS.get(algorithm);
  let length: number | null = null;
  if (digest !== undefined) {
    try {
      length = createHmac(digest, 'probe').update('probe').digest().length;
    } catch {
      length = null;
    }
  }
  macLengths.set(algorithm, length);
  return length ?? undefined;
}

/** Whether `algorithm` is a CouchDB hash name that this runtime can use for HMAC. */
export function isSupportedHashAlgorithm(algorithm: string): boolean {
  return macLength(algorithm) !== undefined;
}

/**
 * `[chttpd_auth] hash_algorithms` as CouchDB reads it: a comma list; unknown or unsupported names
 * are dropped; nothing left means `sha256`. Cookies are signed with the first entry and verified
 * with any of them.
 *
 * @example parseHashAlgorithms('sha256, sha') // ['sha256', 'sha']
 */
export function parseHashAlgorithms(setting: string): string[] {
  const names: string[] = [];
  for (const raw of setting.split(',')) {
    const name = raw.trim();
    if (isSupportedHashAlgorithm(name) && !names.includes(name)) names.push(name);
  }
  return names.length === 0 ? [DEFAULT_HASH_ALGORITHM] : names;
}

function concatBytes(parts: readonly Buffer[]): Buffer {
  const out = Buffer.alloc(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) offset += part.copy(out, offset);
  return out;
}

// Each string is encoded on its own, as Erlang concatenates the two binaries.
function hmacKey(secret: string, salt: string): Buffer {
  return concatBytes([Buffer.from(secret, 'utf8'), Buffer.from(salt, 'utf8')]);
}

/**
 * A signed cookie value. `issuedAtSeconds` is whole seconds since the epoch; `algorithm` must be
 * supported (take it from {@link parseHashAlgorithms}). Both are programmer inputs, so violating
 * them throws `TypeError`. A name containing `:` yields a cookie that never verifies, as in CouchDB.
 *
 * @example mintCookieValue('jan', 1700000000, secret, salt, 'sha256') // 'amFuOjY1NTNGMTAwOh…'
 */
export function mintCookieValue(name: string, issuedAtSeconds: number, secret: string, salt: string, algorithm: string): string {
  if (!Number.isSafeInteger(issuedAtSeconds) || issuedAtSeconds < 0) {
    throw new TypeError('issuedAtSeconds must be a non-negative whole number of seconds');
  }
  const digest = COUCH_HASH_ALGORITHMS.get(algorithm);
  if (digest === undefined || !isSupportedHashAlgorithm(algorithm)) {
    throw new TypeError(`unsupported cookie hash algorithm ${JSON.stringify(algorithm)}`);
  }
  // Erlang's integer_to_list(T, 16) is uppercase; the MAC covers exactly these characters.
  const signed = Buffer.from(`${name}:${issuedAtSeconds.toString(16).toUpperCase()}`, 'utf8');
  const mac = hmac(digest, hmacKey(secret, salt), signed);
  return concatBytes([signed, Buffer.from(':'), mac]).toString('base64url');
}

export type DecodedCookie =
  | { kind: 'empty' }
  | { kind: 'malformed' }
  | {
      kind: 'token';
      name: string;
      timeHex: string;
      mac: Buffer;
      /** The raw bytes of `name:TIMEHEX`, which the MAC covers. */
      signed: Buffer;
    };

const EMPTY: DecodedCookie = Object.freeze({ kind: 'empty' });
const MALFORMED: DecodedCookie = Object.freeze({ kind: 'malformed' });
// CouchDB's b64url NIF: only the URL alphabet, no `=` padding, and a length of 4n+1 is rejected.
// Unused trailing bits are ignored there, and by Node's decoder too.
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const COLON = 0x3a;

/**
 * Splits a cookie value into its three parts. `malformed` is what CouchDB answers with 400
 * "Malformed AuthSession cookie": not base64url, or fewer than two `:` in the decoded bytes. The
 * split is on the first two colons of the raw bytes, so a MAC containing `:` bytes stays whole.
 * Never throws.
 */
export function decodeCookieValue(value: string): DecodedCookie {
  if (value === '') return EMPTY;
  if (value.length % 4 === 1 || !BASE64URL.test(value)) return MALFORMED;
  const bytes = Buffer.from(value, 'base64url');
  const first = bytes.indexOf(COLON);
  if (first === -1) return MALFORMED;
  const second = bytes.indexOf(COLON, first + 1);
  if (second === -1) return MALFORMED;
  return {
    kind: 'token',
    // A name that is not valid UTF-8 becomes U+FFFD here; the MAC is still checked on the raw
    // bytes, so such a name can only verify if this server signed it.
    name: bytes.subarray(0, first).toString('utf8'),
    timeHex: bytes.subarray(first + 1, second).toString('latin1'),
    mac: Buffer.from(bytes.subarray(second + 1)),
    signed: Buffer.from(bytes.subarray(0, second)),
  };
}

const HEX = /^[0-9A-Fa-f]+$/;

/** The issue time in seconds from the hex part of a token; `undefined` when it is not hex. */
export function parseTimeHex(timeHex: string): number | undefined {
  if (!HEX.test(timeHex)) return undefined;
  const seconds = Number.parseInt(timeHex, 16);
  return Number.isFinite(seconds) ? seconds : undefined;
}

/**
 * Whether the MAC was made by any of `secrets` (current first, then recently rotated) with any
 * of `algorithms`, for this user's salt. Only algorithms whose output length equals the MAC
 * length are tried (CouchDB 3.5.2). Every candidate is compared, in constant time, so the time
 * taken does not reveal which secret matched. Empty secrets never verify: an empty key would let
 * anyone who knows the salt forge cookies.
 */
export function verifyCookieMac(
  decoded: DecodedCookie,
  secrets: readonly string[],
  salt: string,
  algorithms: readonly string[],
): boolean {
  if (decoded.kind !== 'token') return false;
  const digests = algorithms
    .filter((algorithm) => macLength(algorithm) === decoded.mac.length)
    .map((algorithm) => COUCH_HASH_ALGORITHMS.get(algorithm)!);
  let matched = false;
  for (const secret of secrets) {
    if (secret === '') continue;
    const key = hmacKey(secret, salt);
    for (const digest of digests) {
      if (constantTimeEqual(hmac(digest, key, decoded.signed), decoded.mac)) matched = true;
    }
  }
  return matched;
}

/**
 * CouchDB's expiry rule: a cookie is valid only while `now < issuedAt + timeout` (all in whole
 * seconds). A timestamp in the future is therefore valid.
 */
export function isExpired(issuedAt: number, now: number, timeoutSeconds: number): boolean {
  return !(now < issuedAt + timeoutSeconds);
}

/**
 * CouchDB's sliding-session rule: re-issue the cookie once the time left is below 90 % of the
 * timeout, i.e. once more than 10 % of it has elapsed (60 s by default). Written exactly as
 * `TimeLeft < Timeout * 0.9` so the float boundary matches Erlang's.
 */
export function needsRefresh(issuedAt: number, now: number, timeoutSeconds: number): boolean {
  return issuedAt + timeoutSeconds - now < timeoutSeconds * 0.9;
}

/** Without leading and trailing spaces and tabs (optional whitespace); a regular expression costs more per request. */
function trimOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text.charCodeAt(start) === 0x20 || text.charCodeAt(start) === 0x09)) start++;
  while (end > start && (text.charCodeAt(end - 1) === 0x20 || text.charCodeAt(end - 1) === 0x09)) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/**
 * The value of the first `AuthSession` cookie in a `Cookie` header, as mochiweb's
 * `get_cookie_value` returns it: later duplicates are ignored, a bare `AuthSession` or
 * `AuthSession=` gives `''`, and a value wrapped in double quotes is unwrapped.
 */
export function firstAuthSessionCookie(cookieHeader: string | undefined): string | undefined {
  // Only a pair named AuthSession answers: without the name anywhere, nothing needs splitting.
  if (cookieHeader === undefined || !cookieHeader.includes('AuthSession')) return undefined;
  for (const pair of cookieHeader.split(';')) {
    const equals = pair.indexOf('=');
    const name = trimOws(equals === -1 ? pair : pair.slice(0, equals));
    if (name !== 'AuthSession') continue;
    const value = equals === -1 ? '' : trimOws(pair.slice(equals + 1));
    return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  }
  return undefined;
}
