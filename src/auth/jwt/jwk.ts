/**
 * The keys of a JSON Web Key Set turned into verification keys. Only public asymmetric signing keys
 * pass: a JWKS is public, so an `oct` (HMAC) key in it would let anybody sign tokens.
 *
 * @module
 */
import { createHash, createPublicKey } from 'node:crypto';

import { isJwtAlgorithm, type JwtAlgorithm, type KeyKind, keyKindOf } from './algorithms.js';
import { publicKeyProblem, VerificationKey } from './verification-key.js';

export interface JwksKey {
  kid: string;
  kind: Exclude<KeyKind, 'hmac'>;
  /** The JWK's `alg`, when it names one: the key then verifies that algorithm only. */
  alg: JwtAlgorithm | undefined;
  key: VerificationKey;
  /** kid, kind, alg and a digest of the public key: equal fingerprints mean the same key. */
  fingerprint: string;
}

/** Keys of a JWKS document, and why the others were left out (for the log). */
export function parseJwks(body: unknown): { keys: JwksKey[]; skipped: string[] } | undefined {
  if (!isObject(body) || !Array.isArray(body.keys)) return undefined;
  const keys: JwksKey[] = [];
  const skipped: string[] = [];
  body.keys.forEach((jwk: unknown, index) => {
    const parsed = parseJwk(jwk);
    if (typeof parsed === 'string') {
      const kid = isObject(jwk) && typeof jwk.kid === 'string' ? `kid ${JSON.stringify(jwk.kid)}` : `#${index}`;
      skipped.push(`${kid}: ${parsed}`);
    } else {
      keys.push(parsed);
    }
  });
  return { keys, skipped };
}

const KIND_OF_KTY: Readonly<Record<string, Exclude<KeyKind, 'hmac'>>> = { RSA: 'rsa', EC: 'ec', OKP: 'okp' };
const PUBLIC_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  RSA: ['n', 'e'],
  EC: ['crv', 'x', 'y'],
  OKP: ['crv', 'x'],
};
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** One usable public key, or why it is not one. */
export function parseJwk(jwk: unknown): JwksKey | string {
  if (!isObject(jwk)) return 'not an object';
  const { kid, kty, alg, use } = jwk;
  if (typeof kid !== 'string' || kid === '') return 'no kid (keys are selected by kid)';
  if (kty === 'oct') return 'a symmetric key, never accepted from a JWKS';
  const kind = typeof kty === 'string' && Object.hasOwn(KIND_OF_KTY, kty) ? KIND_OF_KTY[kty] : undefined;
  if (kind === undefined) return `unsupported kty ${JSON.stringify(kty)}`;
  if (use !== undefined && use !== 'sig') return `use ${JSON.stringify(use)} is not "sig"`;
  const ops = jwk.key_ops;
  if (ops !== undefined && !(Array.isArray(ops) && ops.includes('verify'))) return 'key_ops lacks "verify"';
  if (PRIVATE_MEMBERS.some((member) => Object.hasOwn(jwk, member))) return 'contains private key material';
  if (alg !== undefined && !(isJwtAlgorithm(alg) && keyKindOf(alg) === kind)) {
    return `alg ${JSON.stringify(alg)} does not fit kty ${kty}`;
  }
  const members: Record<string, string> = { kty: kty as string };
  for (const name of PUBLIC_MEMBERS[kty as string]) {
    const value = jwk[name];
    if (typeof value !== 'string') return `member "${name}" missing`;
    members[name] = value;
  }
  let publicKey;
  try {
    publicKey = createPublicKey({ key: members, format: 'jwk' });
  } catch {
    return 'does not decode to a public key';
  }
  const problem = publicKeyProblem(kind, publicKey);
  if (problem !== undefined) return problem.detail;
  const key = new VerificationKey(kind, publicKey);
  if (alg !== undefined && !key.supports(alg)) return `alg ${alg} does not fit curve ${members.crv}`;
  const digest = createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
  return { kid, kind, alg, key, fingerprint: `${kind}:${String(alg)}:${kid}:${digest}` };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
