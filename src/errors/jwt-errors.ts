/**
 * The wire errors of JWT authentication (docs/jwt.md, "Validation order"; docs/errors.md). Statuses and reasons are CouchDB's
 * byte for byte; the few reasons marked "Divan" exist only for the documented extensions.
 *
 * @module
 */
import { badRequest, notFound, unauthorized } from './catalog.js';
import { CouchError } from './couch-error.js';

export const malformedToken = (): CouchError => badRequest('Malformed token');
export const notAnObject = (): CouchError => badRequest('Not an object');
export const missingTyp = (): CouchError => badRequest('Missing typ header parameter');
export const invalidTyp = (): CouchError => badRequest('Invalid typ header parameter');
export const missingAlg = (): CouchError => badRequest('Missing alg header parameter');
export const invalidAlg = (): CouchError => badRequest('Invalid alg header parameter');
export const missingClaim = (claim: 'iss' | 'iat' | 'nbf' | 'exp' | 'kid'): CouchError =>
  badRequest(`Missing ${claim} claim`);
export const invalidClaim = (claim: 'iss' | 'iat'): CouchError => badRequest(`Invalid ${claim} claim`);
export const nbfNotInPast = (): CouchError => unauthorized('nbf not in past');
export const expNotInFuture = (): CouchError => unauthorized('exp not in future');
export const unknownKid = (): CouchError => badRequest('Unknown kid');
export const notAValidKey = (): CouchError => badRequest('Not a valid key');
export const notAnRsaKey = (): CouchError => badRequest('not an RSA public key');
export const notAnEcKey = (): CouchError => badRequest('not an EC public key');
/** Divan: `okp:` entries (EdDSA) hold Ed25519 keys only. */
export const notAnEd25519Key = (): CouchError => badRequest('not an Ed25519 public key');
export const badSignature = (): CouchError => badRequest('Bad signature');
export const badHmac = (): CouchError => badRequest('Bad HMAC');
export const missingSub = (): CouchError => unauthorized('Token missing sub claim.');
export const missingJsonKey = (key: string): CouchError => notFound(`missing json key: ${key}`);
export const jsonMismatch = (): CouchError => notFound('json_mismatch');
export const misconfiguredServer = (): CouchError =>
  new CouchError(500, 'misconfigured_server', 'JWT is not configured correctly');
