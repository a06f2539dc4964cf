/**
 * Shared fixtures for the JWT unit tests: a real Config over temp ini files, key pairs, token
 * builders (signed with jose, or assembled by hand for malformed cases), a fixed clock.
 */
import assert from 'node:assert/strict';
import type { KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

import { CompactSign } from 'jose';

import type { AuthRequest } from '../../../../src/auth/types.js';
import { Config } from '../../../../src/config/config.js';
import { CouchError } from '../../../../src/errors/couch-error.js';
import { Logger } from '../../../../src/log/logger.js';
import { generateKeyPair, type KeyPair } from '../../../support/key-pairs.js';

const directories: string[] = [];
after(() => {
  for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
});

/** A Config whose defaults layer is `defaults` and whose writable layer starts as `local`. */
export async function makeConfig(defaults: string, local?: string): Promise<Config> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'divan-jwt-'));
  directories.push(dir);
  fs.writeFileSync(path.join(dir, 'default.ini'), defaults);
  if (local !== undefined) fs.writeFileSync(path.join(dir, 'local.ini'), local);
  return Config.load({ defaultsFile: path.join(dir, 'default.ini'), files: [], writableFile: path.join(dir, 'local.ini') });
}

/** A logger that keeps its lines. */
export function memoryLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: new Logger('debug', { write: (line: string) => lines.push(line) }), lines };
}

/** 2023-11-14T22:13:20Z, in milliseconds. */
export const NOW_MS = 1_700_000_000_000;
export const NOW = NOW_MS / 1000;

export function clock(startMs = NOW_MS): { now: () => number; set: (ms: number) => void; advance: (ms: number) => void } {
  let current = startMs;
  return {
    now: () => current,
    set: (ms) => {
      current = ms;
    },
    advance: (ms) => {
      current += ms;
    },
  };
}

export type { KeyPair };

const pairs = new Map<string, KeyPair>();

/** Key pairs, generated once per process and label (RSA generation is slow). */
export function rsaPair(label = 'a', modulusLength = 2048): KeyPair {
  return cached(`rsa:${label}:${modulusLength}`, () => generateKeyPair({ type: 'rsa', modulusLength }));
}
export function ecPair(curve: 'P-256' | 'P-384' | 'P-521' | 'secp256k1', label = 'a'): KeyPair {
  return cached(`ec:${curve}:${label}`, () => generateKeyPair({ type: 'ec', namedCurve: curve }));
}
export function edPair(label = 'a'): KeyPair {
  return cached(`ed25519:${label}`, () => generateKeyPair({ type: 'ed25519' }));
}

function cached(key: string, make: () => KeyPair): KeyPair {
  let pair = pairs.get(key);
  if (pair === undefined) pairs.set(key, (pair = make()));
  return pair;
}

/** SPKI PEM of a public key. */
export function pem(publicKey: KeyObject): string {
  return publicKey.export({ type: 'spki', format: 'pem' }) as string;
}

/** The PEM on one ini line: every newline written as a literal backslash-n. */
export function pemOneLine(publicKey: KeyObject): string {
  return pem(publicKey).trimEnd().split('\n').join('\\n');
}

/** A JWK of a public key, with the extra members given (kid, alg, use…). */
export function jwk(publicKey: KeyObject, extra: Record<string, unknown>): Record<string, unknown> {
  return { ...publicKey.export({ format: 'jwk' }), ...extra };
}

export const HMAC_SECRET = Buffer.from('a secret that is 32 bytes long!!');
export const HMAC_SECRET_B64 = HMAC_SECRET.toString('base64');

/** A token signed by jose over exactly the header and payload given. */
export async function sign(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: KeyObject | Uint8Array,
): Promise<string> {
  return new CompactSign(Buffer.from(JSON.stringify(payload))).setProtectedHeader(header as { alg: string }).sign(key);
}

export function b64url(value: string | object): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

/** A token assembled by hand: each part is JSON-encoded unless already a string. */
export function handToken(header: string | object, payload: string | object, signature = 'c2ln'): string {
  return `${b64url(header)}.${b64url(payload)}.${signature}`;
}

export function bearer(token: string, scheme = 'Bearer '): AuthRequest {
  return {
    method: 'GET',
    segments: ['_session'],
    query: new URLSearchParams(),
    headers: { authorization: `${scheme}${token}` },
    peer: '127.0.0.1',
    secure: false,
  };
}

/** Asserts that `action` (a promise, a plain value, or a function called here) rejects (or throws) the CouchError with exactly this status, error and reason. */
export async function rejectsWith(
  action: unknown,
  status: number,
  error: string,
  reason: string,
): Promise<void> {
  // A handler answers without a promise when it can: a plain value is then a missing rejection.
  const run = typeof action === 'function' ? async () => (action as () => unknown)() : () => Promise.resolve(action);
  await assert.rejects(run, (thrown: unknown) => {
    assert.ok(thrown instanceof CouchError, `expected a CouchError, got ${String(thrown)}`);
    assert.deepEqual({ status: thrown.status, error: thrown.error, reason: thrown.reason }, { status, error, reason });
    return true;
  });
}

export const badRequest = (reason: string): [number, string, string] => [400, 'bad_request', reason];
export const unauthorized = (reason: string): [number, string, string] => [401, 'unauthorized', reason];
