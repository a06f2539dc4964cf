import { PBKDF2_PRFS, constantTimeEqual, pbkdf2Hex, randomHex, sha1Hex } from '../crypto/crypto.js';
import { invalidPrf, iterationCountTooHigh, iterationCountTooLow } from '../errors/catalog.js';

/** How a password is stored: the fields CouchDB keeps in a user document or an `[admins]` string. */
export type PasswordHash =
  | { scheme: 'simple'; salt: string; passwordSha: string }
  | { scheme: 'pbkdf2' | 'simple+pbkdf2'; salt: string; derivedKey: string; iterations: number; prf: string };

export interface IterationLimits {
  min: number;
  max: number;
}

const ADMIN_PBKDF2 = /^-pbkdf2(?::([a-z0-9]+))?-([0-9a-fA-F]+),([^,]*),(\d+)$/;
const ADMIN_SIMPLE = /^-hashed-([0-9a-fA-F]+),(.*)$/;

/**
 * Parses an `[admins]` value in one of the forms CouchDB writes; undefined for anything else,
 * which includes a plaintext password that has not been hashed yet.
 */
export function parseAdminHash(value: string): PasswordHash | undefined {
  const pbkdf2 = ADMIN_PBKDF2.exec(value);
  if (pbkdf2) {
    return {
      scheme: 'pbkdf2',
      prf: pbkdf2[1] ?? 'sha',
      derivedKey: pbkdf2[2]!.toLowerCase(),
      salt: pbkdf2[3]!,
      iterations: Number(pbkdf2[4]),
    };
  }
  const simple = ADMIN_SIMPLE.exec(value);
  if (simple) return { scheme: 'simple', passwordSha: simple[1]!.toLowerCase(), salt: simple[2]! };
  return undefined;
}

export function isHashedAdminValue(value: string): boolean {
  return parseAdminHash(value) !== undefined;
}

/**
 * `-pbkdf2:sha256-<hex>,<salt>,<iterations>`, the form CouchDB 3.4+ writes for server admins.
 * Only administrators cause this work (config changes, start-up), so a busy PBKDF2 queue delays it
 * but never refuses it: the plaintext must not stay in the ini file.
 */
export async function hashAdminPassword(password: string, prf: string, iterations: number): Promise<string> {
  const digest = PBKDF2_PRFS.get(prf);
  if (digest === undefined) throw invalidPrf();
  const salt = randomHex();
  const derivedKey = await pbkdf2Hex(password, salt, iterations, digest, { neverRefuse: true });
  return `-pbkdf2:${prf}-${derivedKey},${salt},${iterations}`;
}

/**
 * Slow verification of a password against its stored hash, with CouchDB's 403s for hashes this
 * server refuses to compute. Runs PBKDF2 off the event loop.
 */
export async function verifyPasswordHash(hash: PasswordHash, password: string, limits: IterationLimits): Promise<boolean> {
  if (hash.scheme === 'simple') return constantTimeEqual(sha1Hex(password + hash.salt), hash.passwordSha);
  const digest = PBKDF2_PRFS.get(hash.prf);
  if (digest === undefined) throw invalidPrf();
  if (hash.iterations < limits.min) throw iterationCountTooLow();
  if (hash.iterations > limits.max) throw iterationCountTooHigh();
  const input = hash.scheme === 'simple+pbkdf2' ? sha1Hex(password + hash.salt) : password;
  const derived = await pbkdf2Hex(input, hash.salt, hash.iterations, digest);
  return constantTimeEqual(derived, hash.derivedKey.toLowerCase());
}
