/**
 * The static keys of `[jwt_keys]` (docs/jwt.md, "Static keys"). An entry is named `<kind>:<kid>`: `hmac:` holds
 * a standard-base64 secret, `rsa:` and `ec:` (and Divan's `okp:`, for EdDSA) a PEM public key whose
 * newlines may be written as a literal `\n`. Entries are decoded and imported on first use, kept,
 * and dropped when their config key changes, so a `_config` write takes effect without a restart.
 *
 * @module
 */
import { createPublicKey, createSecretKey } from 'node:crypto';

import type { Config } from '../../config/config.js';
import type { Logger } from '../../log/logger.js';
import type { KeyKind } from './algorithms.js';
import { notAValidKey } from '../../errors/jwt-errors.js';
import { type KeyProblem, publicKeyProblem, VerificationKey, wrongKindError } from './verification-key.js';

export const JWT_KEYS_SECTION = 'jwt_keys';

/** The `kid` a token without one is checked against (docs/jwt.md, "Static keys"). */
export const DEFAULT_KID = '_default';

/**
 * The static keys in force. `get` either returns a key, returns `undefined` when `[jwt_keys]` has
 * no such entry, or throws the entry's error when it exists but cannot be used.
 */
export class KeyRing {
  readonly #config: Config;
  readonly #log: Logger;
  readonly #entries = new Map<string, VerificationKey | KeyProblem>();
  readonly #unsubscribe: () => void;

  constructor(config: Config, log: Logger) {
    this.#config = config;
    this.#log = log;
    this.#unsubscribe = config.onChange(({ section, key }) => {
      if (section === JWT_KEYS_SECTION) this.#entries.delete(key);
    });
  }

  /**
   * The key `[jwt_keys] <kind>:<kid>`. There is deliberately no fallback from a named kid to
   * `_default`: a token that names a key is checked against that key or refused.
   *
   * @throws CouchError 400 `Not a valid key`, `not an RSA public key`, `not an EC public key`
   */
  get(kind: KeyKind, kid: string): VerificationKey | undefined {
    const name = `${kind}:${kid}`;
    let entry = this.#entries.get(name);
    if (entry === undefined) {
      const value = this.#config.get(JWT_KEYS_SECTION, name);
      if (value === undefined) return undefined;
      entry = parseKeyEntry(kind, value);
      if (!(entry instanceof VerificationKey)) {
        // Once per change of the entry: the key name is safe to log, the value never is.
        this.#log.warning(`jwt: [jwt_keys] ${name} is not usable: ${entry.detail}`);
      }
      this.#entries.set(name, entry);
    }
    if (entry instanceof VerificationKey) return entry;
    throw entry.error;
  }

  /** Stops following config changes. */
  close(): void {
    this.#unsubscribe();
    this.#entries.clear();
  }
}

/** Decodes and checks one `[jwt_keys]` value for a key of `kind`. */
export function parseKeyEntry(kind: KeyKind, value: string): VerificationKey | KeyProblem {
  if (kind === 'hmac') {
    const secret = decodeHmacSecret(value);
    if (secret === undefined) return { error: notAValidKey(), detail: 'the value is not standard base64' };
    return new VerificationKey('hmac', createSecretKey(secret));
  }
  const pem = singlePemBlock(unescapePem(value));
  if (pem === undefined) return { error: notAValidKey(), detail: 'the value is not exactly one PEM block' };
  if (!PUBLIC_LABELS[kind].includes(pem.label)) {
    return { error: wrongKindError(kind), detail: `a PEM "${pem.label}" block, not a public key` };
  }
  let key;
  try {
    key = createPublicKey(pem.text);
  } catch {
    return { error: notAValidKey(), detail: 'the PEM block does not decode to a public key' };
  }
  return publicKeyProblem(kind, key) ?? new VerificationKey(kind, key);
}

/**
 * Standard base64 (`+`, `/`, optional `=` padding), whitespace ignored, as Erlang's
 * `base64:decode/1` reads it. Node's own decoder skips invalid characters silently, which would
 * turn a mistyped secret into a different, shorter one.
 */
export function decodeHmacSecret(value: string): Buffer | undefined {
  const text = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  const padded = text.endsWith('=');
  if (padded ? text.length % 4 !== 0 : text.length % 4 === 1) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === 0 ? undefined : bytes;
}

/** Turns each literal backslash-n into a newline, so a PEM fits on one ini line. */
export function unescapePem(value: string): string {
  return value.split('\\n').join('\n');
}

const PUBLIC_LABELS: Readonly<Record<Exclude<KeyKind, 'hmac'>, readonly string[]>> = {
  // "RSA PUBLIC KEY" is PKCS#1, which Erlang's public_key also reads as an RSA public key.
  rsa: ['PUBLIC KEY', 'RSA PUBLIC KEY'],
  ec: ['PUBLIC KEY'],
  okp: ['PUBLIC KEY'],
};

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** The one PEM block in `text` (text around it is ignored, as Erlang's `pem_decode` does). */
function singlePemBlock(text: string): { label: string; text: string } | undefined {
  const blocks = [...text.matchAll(PEM_BLOCK)];
  if (blocks.length !== 1) return undefined;
  return { label: blocks[0][1], text: blocks[0][0] };
}
