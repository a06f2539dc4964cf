/**
 * Key pairs for tests and benchmarks that are safe to export from on Node 20.
 *
 * `generateKeyPairSync` leaves a key-generation job behind whose destructor, run later by the
 * garbage collector, locks the generated key. When that collection happens inside an `export()` of
 * the same key (which holds that lock while it allocates), the process deadlocks: seen as
 * test/unit/auth/jwt/jwks.test.ts hanging about once in 50 runs, with the main thread waiting in
 * `~KeyGenJob` under `ExportJWKRsaKey`. The pair is therefore generated as PEM text and imported
 * again, so the KeyObjects handed out share nothing with the job.
 *
 * @module
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

export interface KeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
}

export type KeyPairSpec =
  | { type: 'rsa'; modulusLength: number }
  | { type: 'ec'; namedCurve: string }
  | { type: 'ed25519' };

const PUBLIC = { type: 'spki', format: 'pem' } as const;
const PRIVATE = { type: 'pkcs8', format: 'pem' } as const;

export function generateKeyPair(spec: KeyPairSpec): KeyPair {
  const pems = generatePems(spec);
  return { publicKey: createPublicKey(pems.publicKey), privateKey: createPrivateKey(pems.privateKey) };
}

function generatePems(spec: KeyPairSpec): { publicKey: string; privateKey: string } {
  switch (spec.type) {
    case 'rsa':
      return generateKeyPairSync('rsa', { modulusLength: spec.modulusLength, publicKeyEncoding: PUBLIC, privateKeyEncoding: PRIVATE });
    case 'ec':
      return generateKeyPairSync('ec', { namedCurve: spec.namedCurve, publicKeyEncoding: PUBLIC, privateKeyEncoding: PRIVATE });
    case 'ed25519':
      return generateKeyPairSync('ed25519', { publicKeyEncoding: PUBLIC, privateKeyEncoding: PRIVATE });
  }
}
