/**
 * One key that can verify tokens: an `hmac:` secret or a public key of a known kind, imported
 * into WebCrypto once per algorithm and then reused, so no request pays for a key import.
 *
 * @module
 */
import { type KeyObject, webcrypto } from 'node:crypto';

import type { CouchError } from '../../errors/couch-error.js';
import { EC_CURVE_OF, importParamsFor, type JwtAlgorithm, JOSE_CURVE_OF_NODE, type KeyKind, keyKindOf } from './algorithms.js';
import { notAnEcKey, notAnEd25519Key, notAnRsaKey, notAValidKey } from '../../errors/jwt-errors.js';

/** jose refuses shorter RSA keys for RS and PS algorithms (RFC 7518 §3.3); refusing them when loading says why. */
const MIN_RSA_BITS = 2048;

export class VerificationKey {
  readonly kind: KeyKind;
  readonly #material: KeyObject;
  readonly #imported = new Map<JwtAlgorithm, Promise<webcrypto.CryptoKey>>();

  /** @param material a secret KeyObject for `hmac`, a public one checked by {@link publicKeyProblem} otherwise */
  constructor(kind: KeyKind, material: KeyObject) {
    this.kind = kind;
    this.#material = material;
  }

  /**
   * Whether this key may verify `alg`: the algorithm's family must be this key's kind, and an
   * ES* algorithm must name this key's curve (ES256 with a P-384 key is refused, not attempted).
   */
  supports(alg: JwtAlgorithm): boolean {
    if (keyKindOf(alg) !== this.kind) return false;
    if (this.kind !== 'ec') return true;
    return EC_CURVE_OF[alg as keyof typeof EC_CURVE_OF] === this.#material.asymmetricKeyDetails?.namedCurve;
  }

  /** The WebCrypto key for `alg`, imported on first use and cached; check {@link supports} first. */
  cryptoKey(alg: JwtAlgorithm): Promise<webcrypto.CryptoKey> {
    let imported = this.#imported.get(alg);
    if (imported === undefined) {
      imported = this.#import(alg);
      this.#imported.set(alg, imported);
      imported.catch(() => this.#imported.delete(alg));
    }
    return imported;
  }

  #import(alg: JwtAlgorithm): Promise<webcrypto.CryptoKey> {
    const params = importParamsFor(alg, this.#material.asymmetricKeyDetails?.namedCurve);
    if (this.kind === 'hmac') {
      return webcrypto.subtle.importKey('raw', this.#material.export(), params, false, ['verify']);
    }
    const spki = this.#material.export({ type: 'spki', format: 'der' });
    return webcrypto.subtle.importKey('spki', spki, params, false, ['verify']);
  }
}

export interface KeyProblem {
  error: CouchError;
  /** For the log; never contains key material. */
  detail: string;
}

/**
 * Why a public key cannot serve as a `kind` key, or `undefined` when it can. The wire reasons are
 * CouchDB's (`not an RSA public key`, `not an EC public key`); `okp` is Divan's.
 */
export function publicKeyProblem(kind: Exclude<KeyKind, 'hmac'>, key: KeyObject): KeyProblem | undefined {
  if (key.type !== 'public') return { error: wrongKindError(kind), detail: `a ${key.type} key, not a public key` };
  const type = key.asymmetricKeyType;
  switch (kind) {
    case 'rsa': {
      if (type !== 'rsa') return { error: notAnRsaKey(), detail: `a ${type} key, not an RSA key` };
      const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
      if (bits < MIN_RSA_BITS) {
        return { error: notAValidKey(), detail: `RSA modulus of ${bits} bits, fewer than ${MIN_RSA_BITS}` };
      }
      return undefined;
    }
    case 'ec': {
      if (type !== 'ec') return { error: notAnEcKey(), detail: `a ${type} key, not an EC key` };
      const curve = key.asymmetricKeyDetails?.namedCurve ?? '';
      // Other curves (secp256k1, brainpool) have no JOSE algorithm here; no token could ever verify.
      if (JOSE_CURVE_OF_NODE[curve] === undefined) {
        return { error: notAValidKey(), detail: `EC curve ${curve}; P-256, P-384 and P-521 are supported` };
      }
      return undefined;
    }
    case 'okp':
      return type === 'ed25519' ? undefined : { error: notAnEd25519Key(), detail: `a ${type} key, not an Ed25519 key` };
  }
}

/** The CouchDB reason for "this is not a public key of the kind the entry name says". */
export function wrongKindError(kind: Exclude<KeyKind, 'hmac'>): CouchError {
  return kind === 'rsa' ? notAnRsaKey() : kind === 'ec' ? notAnEcKey() : notAnEd25519Key();
}
