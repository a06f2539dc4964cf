/**
 * The signature algorithms Divan accepts and the `[jwt_keys]` kind each one is bound to. Binding
 * the key kind to the algorithm family is what makes HMAC/RSA key confusion impossible: an HS*
 * token is only ever checked against an `hmac:` secret, never against the bytes of a public key.
 *
 * CouchDB accepts HS/RS/ES 256/384/512. PS256/384/512 (over `rsa:` keys) and EdDSA (over `okp:`
 * Ed25519 keys) are Divan extensions. `none` and everything else are refused.
 *
 * @module
 */
import type { webcrypto } from 'node:crypto';

const JWT_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
] as const;

export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** The prefix of a `[jwt_keys]` entry name: `hmac:`, `rsa:`, `ec:`, and Divan's `okp:`. */
export type KeyKind = 'hmac' | 'rsa' | 'ec' | 'okp';

const ALGORITHMS: ReadonlySet<string> = new Set(JWT_ALGORITHMS);

export function isJwtAlgorithm(value: unknown): value is JwtAlgorithm {
  return typeof value === 'string' && ALGORITHMS.has(value);
}

export function keyKindOf(alg: JwtAlgorithm): KeyKind {
  if (alg.startsWith('HS')) return 'hmac';
  if (alg.startsWith('RS') || alg.startsWith('PS')) return 'rsa';
  if (alg.startsWith('ES')) return 'ec';
  return 'okp';
}

/** HS* algorithms fail with `Bad HMAC`, every other one with `Bad signature`. */
export function isMacAlgorithm(alg: JwtAlgorithm): boolean {
  return keyKindOf(alg) === 'hmac';
}

/** Node's name of the curve an ES* algorithm requires (RFC 7518 §3.4). */
export const EC_CURVE_OF: Readonly<Record<'ES256' | 'ES384' | 'ES512', string>> = {
  ES256: 'prime256v1',
  ES384: 'secp384r1',
  ES512: 'secp521r1',
};

/** The same curves by their JOSE (`crv`) names, which WebCrypto also uses. */
export const JOSE_CURVE_OF_NODE: Readonly<Record<string, string>> = {
  prime256v1: 'P-256',
  secp384r1: 'P-384',
  secp521r1: 'P-521',
};

type ImportParams =
  | webcrypto.HmacImportParams
  | webcrypto.RsaHashedImportParams
  | webcrypto.EcKeyImportParams
  | webcrypto.Algorithm;

/** WebCrypto import parameters for a key used with `alg`; `curve` is the EC key's Node curve name. */
export function importParamsFor(alg: JwtAlgorithm, curve?: string): ImportParams {
  const hash = `SHA-${alg.slice(2)}`;
  switch (alg.slice(0, 2)) {
    case 'HS':
      return { name: 'HMAC', hash };
    case 'RS':
      return { name: 'RSASSA-PKCS1-v1_5', hash };
    case 'PS':
      return { name: 'RSA-PSS', hash };
    case 'ES':
      return { name: 'ECDSA', namedCurve: JOSE_CURVE_OF_NODE[curve ?? ''] ?? '' };
    default:
      return { name: 'Ed25519' };
  }
}
