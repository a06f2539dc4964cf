import { createHash, createHmac, pbkdf2 as pbkdf2Callback, randomBytes, timingSafeEqual } from 'node:crypto';
import * as cryptoModule from 'node:crypto';
import { promisify } from 'node:util';
import { passwordHashingBusy } from '../errors/catalog.js';
import { WorkQueue } from './work-queue.js';

const pbkdf2Async = promisify(pbkdf2Callback);

/** The PRFs CouchDB accepts for PBKDF2, by their CouchDB names, with their Node digest names. */
export const PBKDF2_PRFS: ReadonlyMap<string, string> = new Map([
  ['sha', 'sha1'],
  ['sha224', 'sha224'],
  ['sha256', 'sha256'],
  ['sha384', 'sha384'],
  ['sha512', 'sha512'],
]);

const DIGEST_LENGTHS: Record<string, number> = { sha1: 20, sha224: 28, sha256: 32, sha384: 48, sha512: 64 };

/**
 * Every PBKDF2 of the process takes a place here: logins, `_users` writes, hash upgrades and
 * `[admins]` hashing. The libuv pool (UV_THREADPOOL_SIZE, 4 by default) is per process and also
 * serves file reads, gzip and WebCrypto, so PBKDF2 may only use part of it, and a flood of cold
 * logins gets 503s instead of an ever longer line. Configured from `[chttpd_auth]`
 * (users/hash-cost.ts).
 */
export const pbkdf2Queue = new WorkQueue({ concurrency: 2, maxWaiting: 32 }, passwordHashingBusy);

/**
 * PBKDF2 on the libuv pool: at 600000 iterations one derivation costs ~180 ms, which must never
 * run on the event loop. Salt and password are used as their UTF-8 bytes, as CouchDB does.
 * Throws a 503 when `pbkdf2Queue` is full, unless `neverRefuse` (administrators' own work).
 */
export async function pbkdf2Hex(
  password: string,
  salt: string,
  iterations: number,
  digest: string,
  options: { neverRefuse?: boolean } = {},
): Promise<string> {
  const length = DIGEST_LENGTHS[digest];
  if (length === undefined) throw new TypeError(`unsupported PBKDF2 digest ${digest}`);
  const key = await pbkdf2Queue.run(
    () => pbkdf2Async(Buffer.from(password, 'utf8'), Buffer.from(salt, 'utf8'), iterations, length, digest),
    options,
  );
  return key.toString('hex');
}

export function sha1Hex(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

export function md5Hex(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

/**
 * SHA-256 of `key ‖ 0 ‖ text` in one call (no Hmac object per call). For in-memory comparisons
 * under a secret random key, where a fixed-length digest of a keyed input is all that is needed.
 */
export function keyedSha256(key: string, text: string): Buffer {
  return oneShotHash('sha256', `${key}\u0000${text}`);
}

const oneShotHash: (algorithm: string, data: string) => Buffer =
  typeof (cryptoModule as { hash?: unknown }).hash === 'function'
    ? (algorithm, data) => (cryptoModule as unknown as { hash(a: string, d: string, o: 'buffer'): Buffer }).hash(algorithm, data, 'buffer')
    : (algorithm, data) => createHash(algorithm).update(data, 'utf8').digest();

export function hmac(digest: string, key: string | Buffer, message: string | Buffer): Buffer {
  return createHmac(digest, key).update(message).digest();
}

/** Constant-time equality for secrets of any length (lengths are not secret here). */
export function constantTimeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const left = typeof a === 'string' ? Buffer.from(a, 'utf8') : a;
  const right = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
  if (left.length !== right.length) {
    // Still spend the comparison so a length mismatch is not faster than a content mismatch.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** 32 lowercase hex characters from 16 random bytes: CouchDB's salt, secret and uuid shape. */
export function randomHex(bytes = 16): string {
  return randomBytes(bytes).toString('hex');
}

export function base64UrlEncode(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}
