/**
 * The signature check, delegated to jose with the algorithm pinned, so the token's own header
 * can never pick a different one. Claims are not looked at here: `jwtVerify` would validate `exp`
 * and `nbf` whenever present, while only the claims in `required_claims` are validated
 * (docs/jwt.md, "Required claims").
 *
 * @module
 */
import type { webcrypto } from 'node:crypto';

import { compactVerify, errors } from 'jose';

import type { JwtAlgorithm } from './algorithms.js';

/** Resolves to whether `token` carries a valid signature by `key` under `alg`. */
export type SignatureVerifier = (token: string, key: webcrypto.CryptoKey, alg: JwtAlgorithm) => Promise<boolean>;

export const verifySignature: SignatureVerifier = async (token, key, alg) => {
  try {
    await compactVerify(token, key, { algorithms: [alg] });
    return true;
  } catch (error) {
    // A JOSEError is about the token (bad signature, undecodable signature, an unknown `crit`):
    // the caller answers Bad signature / Bad HMAC. Anything else is a bug and must surface.
    if (error instanceof errors.JOSEError) return false;
    throw error;
  }
};
