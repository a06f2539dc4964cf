import { constantTimeEqual, hmac } from '../crypto/crypto.js';
import type { Json } from '../storage/storage.js';
import { isJsonObject, own } from './user-json.js';

/**
 * Time-based one-time passwords (RFC 6238) for the second factor of `POST /_session`, as CouchDB
 * 3.3+ reads them from a user document:
 *
 *     "totp": {"key": "<base32 secret>", "algorithm": "sha" | "sha256" | "sha512", "length": 6 | 7 | 8}
 *
 * Pure functions only: the caller passes the time, and remembers used codes (see totp-replay.ts).
 */

export type TotpAlgorithm = 'sha' | 'sha256' | 'sha512';
type TotpLength = 6 | 7 | 8;

export interface TotpSettings {
  /** The decoded secret. */
  key: Buffer;
  algorithm: TotpAlgorithm;
  length: TotpLength;
}

export type TotpVerdict = { ok: true; counter: number } | { ok: false };

/** Seconds per time step (RFC 6238's X), as CouchDB. */
const TOTP_STEP_SECONDS = 30;

/** Secrets shorter than this (80 bits, 16 base32 characters) are refused by the `_users` rules. */
const TOTP_MIN_KEY_BYTES = 10;

const DIGESTS: Readonly<Record<TotpAlgorithm, string>> = { sha: 'sha1', sha256: 'sha256', sha512: 'sha512' };
const LENGTHS: readonly number[] = [6, 7, 8];
const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** Unpadded base32 lengths modulo 8 that whole bytes can produce (RFC 4648 §6). */
const VALID_TAIL_LENGTHS: readonly number[] = [0, 2, 4, 5, 7];

/**
 * RFC 4648 base32: case-insensitive, `=` padding optional (but when present it must complete the
 * last 8-character group). undefined for anything else: other characters, spaces, a bad length.
 *
 * @example base32Decode('GEZDGNBVGY3TQOJQ') // → <Buffer 31 32 33 34 35 36 37 38 39 30> ("1234567890")
 */
export function base32Decode(text: string): Buffer | undefined {
  const unpadded = text.replace(/=+$/, '');
  if (unpadded.length !== text.length && text.length % 8 !== 0) return undefined;
  if (!VALID_TAIL_LENGTHS.includes(unpadded.length % 8)) return undefined;
  // Padding can only fill what the last group misses: at most 6 characters.
  if (text.length - unpadded.length > 6) return undefined;
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of unpadded.toUpperCase()) {
    const value = BASE32_ALPHABET.indexOf(char);
    if (value < 0) return undefined;
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((buffer >> bits) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/**
 * RFC 4648 base32 without padding, upper case: the form authenticator apps expect in an otpauth URI.
 *
 * @example base32Encode(Buffer.from('1234567890')) // → 'GEZDGNBVGY3TQOJQ'
 */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32_ALPHABET[(buffer >> bits) & 31];
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/** The RFC 6238 time step of a Unix time in seconds: floor(t / 30). */
export function totpCounter(nowSeconds: number): number {
  return Math.floor(nowSeconds / TOTP_STEP_SECONDS);
}

/**
 * The HOTP value (RFC 4226) of one counter: HMAC over the 8-byte big-endian counter, dynamic
 * truncation, the last `length` decimal digits, zero-padded.
 *
 * @example totpCode(Buffer.from('12345678901234567890'), 1, 'sha', 8) // → '94287082' (RFC 6238, T = 59)
 */
export function totpCode(key: Buffer, counter: number, algorithm: TotpAlgorithm, length: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = hmac(DIGESTS[algorithm], key, message);
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** length).padStart(length, '0');
}

/**
 * Checks a token against the codes of the steps before, at and after `nowSeconds` (t−30 s, t,
 * t+30 s). All three are computed and compared in constant time, with no early exit; when the
 * token matches more than one step (a coincidence), the latest one counts. A token that is not
 * exactly `length` ASCII digits never matches.
 *
 * @example verifyTotp('94287082', { key: Buffer.from('12345678901234567890'), algorithm: 'sha', length: 8 }, 59) // → { ok: true, counter: 1 }
 */
export function verifyTotp(token: string | undefined, settings: TotpSettings, nowSeconds: number): TotpVerdict {
  const wellFormed = token !== undefined && token.length === settings.length && /^[0-9]+$/.test(token);
  // A malformed token is still compared (against a stand-in) so that every attempt costs the same.
  const candidate = wellFormed ? token : '-'.repeat(settings.length);
  const now = totpCounter(nowSeconds);
  let matched = -1;
  for (const counter of [now - 1, now, now + 1]) {
    if (counter < 0) continue;
    const equal = constantTimeEqual(totpCode(settings.key, counter, settings.algorithm, settings.length), candidate);
    if (equal) matched = counter;
  }
  return wellFormed && matched >= 0 ? { ok: true, counter: matched } : { ok: false };
}

/**
 * Why a user document's `totp` member is unacceptable (the 403 reason of the `_users` rules), or
 * undefined when it is fine. Absent or `null` means "no second factor" and is fine.
 *
 * @example totpProblem({ key: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', length: 9 }) // → 'totp.length must be 6, 7 or 8.'
 */
export function totpProblem(value: Json | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) return 'totp must be an object.';
  const key = own(value, 'key');
  const decoded = typeof key === 'string' ? base32Decode(key) : undefined;
  if (decoded === undefined || decoded.length === 0) return 'totp.key must be a base32 string.';
  if (decoded.length < TOTP_MIN_KEY_BYTES) {
    return `totp.key is too short: use at least ${TOTP_MIN_KEY_BYTES} random bytes (16 base32 characters).`;
  }
  const algorithm = own(value, 'algorithm');
  if (algorithm !== undefined && !(typeof algorithm === 'string' && Object.hasOwn(DIGESTS, algorithm))) {
    return 'totp.algorithm must be sha, sha256 or sha512.';
  }
  const length = own(value, 'length');
  if (length !== undefined && !(typeof length === 'number' && LENGTHS.includes(length))) return 'totp.length must be 6, 7 or 8.';
  return undefined;
}

/**
 * The settings of a stored `totp` member (defaults `sha` and 6 digits); undefined when it is not
 * an acceptable one, which a login must treat as "no code can ever match".
 *
 * @example totpSettings({ key: 'GEZDGNBVGY3TQOJQ' }) // → { key: <Buffer …>, algorithm: 'sha', length: 6 }
 */
export function totpSettings(value: Json | undefined): TotpSettings | undefined {
  if (value === undefined || value === null || totpProblem(value) !== undefined || !isJsonObject(value)) return undefined;
  const key = base32Decode(own(value, 'key') as string)!;
  const algorithm = (own(value, 'algorithm') ?? 'sha') as TotpAlgorithm;
  const length = (own(value, 'length') ?? 6) as TotpLength;
  return { key, algorithm, length };
}

