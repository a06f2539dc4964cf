import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as cryptoModule from 'node:crypto';
import { channel } from 'node:diagnostics_channel';
import { passwordHashingBusy } from '../errors/catalog.js';
import { Pbkdf2Threads } from './pbkdf2-threads.js';
import { WorkQueue } from './work-queue.js';

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
 * `[admins]` hashing. Bounded so that a flood of cold logins gets 503s instead of an ever longer
 * line. Configured from `[chttpd_auth]` (users/hash-cost.ts).
 */
export const pbkdf2Queue = new WorkQueue({ concurrency: 2, maxWaiting: 32 }, passwordHashingBusy);

const pbkdf2Threads = new Pbkdf2Threads();

/**
 * `divan:pbkdf2` (node:diagnostics_channel) hears `{ salt, iterations }` for every derivation that
 * starts: how tests and tools count the expensive work without timing it. Never the password.
 */
const pbkdf2Channel = channel('divan:pbkdf2');
let pbkdf2Nice = 10;

/** `[chttpd_auth] pbkdf2_nice`: the nice value (0–19) of the threads that derive keys. */
export function setPbkdf2Nice(nice: number): void {
  pbkdf2Nice = Math.min(19, Math.max(0, Math.floor(nice) || 0));
}

/**
 * PBKDF2 on low-priority threads (pbkdf2-threads.ts): at 600000 iterations one derivation costs
 * ~180 ms, which must never run on the event loop. Salt and password are used as their UTF-8 bytes, as CouchDB does.
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
    () => {
      if (pbkdf2Channel.hasSubscribers) pbkdf2Channel.publish({ salt, iterations });
      return pbkdf2Threads.derive({ password, salt, iterations, length, digest, nice: pbkdf2Nice });
    },
    options,
  );
  return key.toString('hex');
}

export function sha1Hex(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

/**
 * SHA-256 of `key ‖ 0 ‖ text` in one call (no Hmac object per call), in base64 (or as its 32 bytes
 * in a latin1 string, for `storedDigestEquals`). For in-memory comparisons under a secret random
 * key, where a fixed-length digest of a keyed input is all that is needed. A string rather than a
 * Buffer: no backing store per call (it runs per Basic request).
 */
export function keyedSha256(key: string, text: string, encoding: 'base64' | 'latin1' = 'base64'): string {
  return sha256Text(`${key}\u0000${text}`, encoding);
}

type TextDigest = 'base64' | 'base64url' | 'latin1';

/** SHA-256 of UTF-8 text, as text; one call, no Hash object, where Node has `crypto.hash`. */
export const sha256Text: (data: string, encoding: TextDigest) => string =
  typeof (cryptoModule as { hash?: unknown }).hash === 'function'
    ? (data, encoding) => (cryptoModule as unknown as { hash(a: string, d: string, o: TextDigest): string }).hash('sha256', data, encoding)
    : (data, encoding) => createHash('sha256').update(data, 'utf8').digest(encoding === 'latin1' ? 'binary' : encoding);

/**
 * Constant-time equality of two digests in text form (hex or base64, as `keyedSha256` gives), through
 * `timingSafeEqual` like every other secret comparison (tested by test/hardening/constant-time):
 * digest text is ASCII, so latin1 copies are exact and small enough for Node's Buffer pool.
 */
export function digestsEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1'));
}

/**
 * Constant-time equality of a digest kept as bytes and a fresh one as latin1 text (`keyedSha256(…,
 * 'latin1')`), through `timingSafeEqual`. The fresh one is copied into `scratch`, a buffer of the
 * digest's length that the caller reuses, so a comparison allocates nothing.
 */
export function storedDigestEquals(stored: Buffer, fresh: string, scratch: Buffer): boolean {
  if (fresh.length !== stored.length || scratch.length !== stored.length) return false;
  scratch.write(fresh, 'latin1');
  return timingSafeEqual(stored, scratch);
}

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

/** Random bytes drawn from the system at once and handed out in order, as node:crypto's `randomUUID` does. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let pooledAt = 0;

/**
 * 32 lowercase hex characters from 16 random bytes: CouchDB's salt, secret and uuid shape. Taken
 * from a pool refilled 4 KiB at a time: one system call per request (every show, list and update
 * has its `req.uuid`) cost more than the rest of building `req`. Each byte is handed out once.
 */
export function randomHex(bytes = 16): string {
  if (bytes > POOL_BYTES) return randomBytes(bytes).toString('hex');
  if (pooledAt + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    pooledAt = 0;
  }
  pooledAt += bytes;
  return pool.toString('hex', pooledAt - bytes, pooledAt);
}
