import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { decodeHmacSecret, KeyRing, parseKeyEntry, unescapePem } from '../../../../src/auth/jwt/key-ring.js';
import { VerificationKey } from '../../../../src/auth/jwt/verification-key.js';
import {
  badRequest,
  ecPair,
  edPair,
  HMAC_SECRET_B64,
  makeConfig,
  memoryLog,
  pem,
  pemOneLine,
  rejectsWith,
  rsaPair,
} from './fixtures.js';

function reasonOf(entry: ReturnType<typeof parseKeyEntry>): string {
  return entry instanceof VerificationKey ? 'ok' : entry.error.reason;
}

describe('decodeHmacSecret', () => {
  test('standard base64, padded or not, whitespace ignored', () => {
    assert.equal(decodeHmacSecret('c2VjcmV0')?.toString(), 'secret');
    assert.equal(decodeHmacSecret('c2VjcmV0cw==')?.toString(), 'secrets');
    assert.equal(decodeHmacSecret('c2VjcmV0cw')?.toString(), 'secrets');
    assert.equal(decodeHmacSecret('c2Vj cmV0')?.toString(), 'secret');
    assert.deepEqual(decodeHmacSecret('+/+/'), Buffer.from([0xfb, 0xff, 0xbf]));
  });

  test('anything else is not a key (Node alone would silently skip the bad characters)', () => {
    for (const value of ['', '====', 'c2VjcmV0!', 'c2Vj-mV0', 'c2Vj_mV0', 'c2VjcmV0c', 'c2VjcmV0cw=', 'a=bc']) {
      assert.equal(decodeHmacSecret(value), undefined, value);
    }
  });
});

describe('unescapePem', () => {
  test('turns literal backslash-n into newlines', () => {
    assert.equal(unescapePem('a\\nb\\n'), 'a\nb\n');
    assert.equal(unescapePem('no escapes'), 'no escapes');
  });
});

describe('parseKeyEntry', () => {
  test('hmac: base64 secret, or Not a valid key', () => {
    assert.equal(reasonOf(parseKeyEntry('hmac', HMAC_SECRET_B64)), 'ok');
    assert.equal(reasonOf(parseKeyEntry('hmac', 'not base64!')), 'Not a valid key');
  });

  test('rsa: SPKI PEM on one line with \\n escapes, real newlines, or PKCS#1', () => {
    const { publicKey } = rsaPair();
    assert.equal(reasonOf(parseKeyEntry('rsa', pemOneLine(publicKey))), 'ok');
    assert.equal(reasonOf(parseKeyEntry('rsa', pem(publicKey))), 'ok');
    const pkcs1 = (publicKey.export({ type: 'pkcs1', format: 'pem' }) as string).trimEnd().split('\n').join('\\n');
    assert.equal(reasonOf(parseKeyEntry('rsa', pkcs1)), 'ok');
  });

  test('rsa: an EC or Ed25519 key, or a private key, is not an RSA public key', () => {
    assert.equal(reasonOf(parseKeyEntry('rsa', pemOneLine(ecPair('P-256').publicKey))), 'not an RSA public key');
    assert.equal(reasonOf(parseKeyEntry('rsa', pemOneLine(edPair().publicKey))), 'not an RSA public key');
    // Node would happily derive the public key from a private one; CouchDB refuses the entry.
    const privatePem = rsaPair().privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    assert.equal(reasonOf(parseKeyEntry('rsa', privatePem)), 'not an RSA public key');
  });

  test('rsa: a modulus under 2048 bits is Not a valid key', () => {
    assert.equal(reasonOf(parseKeyEntry('rsa', pemOneLine(rsaPair('short', 1024).publicKey))), 'Not a valid key');
  });

  test('PEM that is empty, garbage, corrupted, or two blocks is Not a valid key', () => {
    const one = pem(rsaPair().publicKey);
    const corrupted = one.replace(/\n[A-Za-z0-9+/]{10}/, '\n!!!!!!!!!!');
    for (const value of ['', 'garbage', '-----BEGIN PUBLIC KEY-----\\n-----END PUBLIC KEY-----', corrupted, one + one]) {
      assert.equal(reasonOf(parseKeyEntry('rsa', value)), 'Not a valid key', value.slice(0, 40));
    }
  });

  test('ec: P-256/384/521 keys; RSA is not an EC public key; other curves are not valid', () => {
    for (const curve of ['P-256', 'P-384', 'P-521'] as const) {
      assert.equal(reasonOf(parseKeyEntry('ec', pemOneLine(ecPair(curve).publicKey))), 'ok', curve);
    }
    assert.equal(reasonOf(parseKeyEntry('ec', pemOneLine(rsaPair().publicKey))), 'not an EC public key');
    assert.equal(reasonOf(parseKeyEntry('ec', pemOneLine(ecPair('secp256k1').publicKey))), 'Not a valid key');
  });

  test('okp: Ed25519 only', () => {
    assert.equal(reasonOf(parseKeyEntry('okp', pemOneLine(edPair().publicKey))), 'ok');
    assert.equal(reasonOf(parseKeyEntry('okp', pemOneLine(rsaPair().publicKey))), 'not an Ed25519 public key');
  });

  test('an EC key supports only the ES algorithm of its curve', () => {
    const p256 = parseKeyEntry('ec', pem(ecPair('P-256').publicKey));
    const p384 = parseKeyEntry('ec', pem(ecPair('P-384').publicKey));
    assert.ok(p256 instanceof VerificationKey && p384 instanceof VerificationKey);
    assert.equal(p256.supports('ES256'), true);
    assert.equal(p256.supports('ES384'), false);
    assert.equal(p384.supports('ES384'), true);
    assert.equal(p256.supports('RS256'), false);
  });
});

describe('KeyRing', () => {
  test('looks entries up by kind and kid; no entry is undefined; keys are imported once', async () => {
    const config = await makeConfig(`[jwt_keys]\nhmac:_default = ${HMAC_SECRET_B64}\nhmac:abc= = ${HMAC_SECRET_B64}\n`);
    const ring = new KeyRing(config, memoryLog().log);
    const key = ring.get('hmac', '_default');
    assert.ok(key instanceof VerificationKey);
    assert.equal(ring.get('hmac', '_default'), key);
    // a key name ending in "=" is written "hmac:abc= = …" in the ini (reference §6.5)
    assert.ok(ring.get('hmac', 'abc=') instanceof VerificationKey);
    assert.equal(ring.get('hmac', 'abc'), undefined);
    assert.equal(ring.get('rsa', '_default'), undefined);
    assert.equal(ring.get('hmac', 'missing'), undefined);
    ring.close();
  });

  test('an unusable entry throws its error, and is logged once without its value', async () => {
    const { log, lines } = memoryLog();
    const config = await makeConfig('[jwt_keys]\nhmac:bad = not-base64!secretish\n');
    const ring = new KeyRing(config, log);
    await rejectsWith(() => ring.get('hmac', 'bad'), ...badRequest('Not a valid key'));
    await rejectsWith(() => ring.get('hmac', 'bad'), ...badRequest('Not a valid key'));
    assert.equal(lines.length, 1);
    assert.match(lines[0], /\[jwt_keys\] hmac:bad is not usable/);
    assert.doesNotMatch(lines[0], /secretish/);
    ring.close();
  });

  test('a config change replaces the entry without a restart; a delete removes it', async () => {
    const config = await makeConfig('');
    const ring = new KeyRing(config, memoryLog().log);
    assert.equal(ring.get('rsa', 'k'), undefined);
    await config.set('jwt_keys', 'rsa:k', pemOneLine(rsaPair('a').publicKey));
    const first = ring.get('rsa', 'k');
    assert.ok(first instanceof VerificationKey);
    await config.set('jwt_keys', 'rsa:k', pemOneLine(rsaPair('b').publicKey));
    const second = ring.get('rsa', 'k');
    assert.ok(second instanceof VerificationKey);
    assert.notEqual(second, first);
    await config.set('jwt_keys', 'rsa:k', 'broken');
    await rejectsWith(() => ring.get('rsa', 'k'), ...badRequest('Not a valid key'));
    await config.delete('jwt_keys', 'rsa:k');
    assert.equal(ring.get('rsa', 'k'), undefined);
    ring.close();
  });
});
