/**
 * Reading the parts of a compact JWS before anything is trusted (docs/jwt.md, "Validation order"
 * rows 1, 3, 3b, 5, 6). Pure; each failure is the CouchError CouchDB answers with.
 *
 * @module
 */
import { isJwtAlgorithm, type JwtAlgorithm } from './algorithms.js';
import { invalidAlg, malformedToken, missingAlg, notAnObject } from '../../errors/jwt-errors.js';

/** Row 1: exactly three dot-separated parts. */
export function splitToken(token: string): [header: string, payload: string, signature: string] {
  const parts = token.split('.');
  if (parts.length !== 3) throw malformedToken();
  return parts as [string, string, string];
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Rows 3/3b and 6: unpadded base64url of UTF-8 JSON (else 400 `Malformed token`) holding an object
 * (else 400 `Not an object`). Decoding is strict: Node's base64url decoder would skip stray
 * characters, and a lenient UTF-8 decoder would swap bad bytes for U+FFFD.
 */
export function decodeJsonObject(segment: string): Record<string, unknown> {
  if (!BASE64URL.test(segment) || segment.length % 4 === 1) throw malformedToken();
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(Buffer.from(segment, 'base64url')));
  } catch {
    throw malformedToken();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw notAnObject();
  return value as Record<string, unknown>;
}

/**
 * Row 5: `alg` must be present and one of the supported algorithms. `none`, unknown names and
 * non-strings answer 400 `Invalid alg header parameter`.
 */
export function readAlg(header: Readonly<Record<string, unknown>>): JwtAlgorithm {
  if (!Object.hasOwn(header, 'alg')) throw missingAlg();
  const alg = header.alg;
  if (!isJwtAlgorithm(alg)) throw invalidAlg();
  return alg;
}
