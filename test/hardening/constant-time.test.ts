/**
 * Every secret is compared in constant time, checked by what the code calls rather than by timing
 * it (timings on shared machines prove nothing): `node:crypto.timingSafeEqual` is wrapped BEFORE
 * any server module loads (the server is imported dynamically below, as in
 * test/http/credentials-cache.test.ts) and each call records the lengths it compared. Presenting a
 * wrong cookie MAC, proxy token, password (cached and uncached, user and admin) or TOTP code must
 * go through it, with the full-length secret on one side. JWT HMACs are checked by WebCrypto's
 * `subtle.verify` (OpenSSL's constant-time compare), so that call is counted instead.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { after, before, describe, test } from 'node:test';

import { basicValue, raw } from '../support/hardening.js';
import type { TestServer } from '../support/server.js';

const require = createRequire(import.meta.url);
const nodeCrypto = require('node:crypto') as Record<string, unknown>;
const originalTimingSafeEqual = nodeCrypto['timingSafeEqual'] as (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => boolean;
const comparisons: Array<[number, number]> = [];
nodeCrypto['timingSafeEqual'] = function countedTimingSafeEqual(a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView): boolean {
  comparisons.push([a.byteLength, b.byteLength]);
  return originalTimingSafeEqual(a, b);
};
syncBuiltinESMExports();

// WebCrypto: jose verifies JWS signatures with subtle.verify.
const subtle = Object.getPrototypeOf(globalThis.crypto.subtle) as { verify: (...args: unknown[]) => Promise<boolean> };
const originalVerify = subtle.verify;
const webcryptoVerifications: string[] = [];
subtle.verify = function countedVerify(this: unknown, ...args: unknown[]) {
  const algorithm = args[0] as { name?: string } | string;
  webcryptoVerifications.push(typeof algorithm === 'string' ? algorithm : String(algorithm.name));
  return originalVerify.apply(this, args);
};

const { startServer } = await import('../support/server.js');

const SECRET = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const HMAC_KEY = Buffer.from('a jwt secret that is 32 bytes!!!');
const TOTP_KEY = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const HANDLERS = ['cookie', 'proxy', 'jwt', 'default'].map((name) => `{chttpd_auth, ${name}_authentication_handler}`).join(', ');

/** The comparisons one action made. */
async function comparedDuring(action: () => Promise<unknown>): Promise<Array<[number, number]>> {
  const start = comparisons.length;
  await action();
  return comparisons.slice(start);
}

describe('constant-time comparison of every secret (the code path calls timingSafeEqual)', () => {
  let server: TestServer;
  let port: number;
  let salt: string;

  before(async () => {
    server = await startServer({
      ini: [
        '[chttpd]', `authentication_handlers = ${HANDLERS}`,
        '[chttpd_auth]', `secret = ${SECRET}`, 'proxy_use_secret = true', 'iterations = 1000',
        '[chttpd_auth_lockout]', 'mode = off',
        '[jwt_keys]', `hmac:_default = ${HMAC_KEY.toString('base64')}`,
        '[admins]', 'ops = ops-pass',
      ].join('\n'),
    });
    port = Number(new URL(server.url).port);
    for (const [name, extra] of [['carla', {}], ['tess', { totp: { key: TOTP_KEY } }]] as const) {
      const res = await server.admin(`/_users/org.couchdb.user:${name}`, { method: 'PUT', body: { name, password: `${name}-pass`, roles: [], type: 'user', ...extra } });
      assert.equal(res.status, 201, res.text);
    }
    salt = (await server.admin('/_users/org.couchdb.user:carla')).body.salt;
  });

  after(async () => {
    await server.close();
    nodeCrypto['timingSafeEqual'] = originalTimingSafeEqual;
    syncBuiltinESMExports();
    subtle.verify = originalVerify;
  });

  const session = (headers: [string, string][]) => raw(port, { target: '/_session', headers });

  test('a cookie with a wrong MAC of the right length: compared in constant time against the 32-byte HMAC', async () => {
    const signed = Buffer.from(`carla:${Math.floor(Date.now() / 1000).toString(16).toUpperCase()}`);
    const good = createHmac('sha256', SECRET + salt).update(signed).digest();
    const wrong = Buffer.from(good);
    wrong[0]! ^= 0x80;
    const value = Buffer.concat([signed, Buffer.from(':'), wrong]).toString('base64url');
    let res;
    const calls = await comparedDuring(async () => (res = await session([['Cookie', `AuthSession=${value}`]])));
    assert.equal(res!.json.userCtx.name, null);
    assert.ok(calls.some(([a, b]) => a === 32 && b === 32), JSON.stringify(calls));
    const right = Buffer.concat([signed, Buffer.from(':'), good]).toString('base64url');
    const ok = await comparedDuring(async () => (res = await session([['Cookie', `AuthSession=${right}`]])));
    assert.equal(res!.json.userCtx.name, 'carla', 'the control: the genuine MAC authenticates through the same compare');
    assert.ok(ok.some(([a, b]) => a === 32 && b === 32));
  });

  test('a wrong proxy token: compared in constant time with every secret and algorithm, no early exit', async () => {
    const good = createHmac('sha256', SECRET).update('pat').digest('hex');
    const wrong = `${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}`;
    let res;
    const calls = await comparedDuring(async () => (res = await session([['X-Auth-CouchDB-UserName', 'pat'], ['X-Auth-CouchDB-Token', wrong]])));
    assert.equal(res!.json.userCtx.name, null);
    // sha256 and sha (the default hash_algorithms) are both tried: 32 and 20 bytes of HMAC.
    assert.ok(calls.some(([a, b]) => a === 32 && b === 32), JSON.stringify(calls));
    assert.ok(calls.length >= 2, `${calls.length} comparisons`);
  });

  test('a wrong password, on the slow path and then on the verified-password cache: both compare in constant time', async () => {
    const cold = await comparedDuring(() => session([['Authorization', basicValue('carla', 'not-it')]]));
    assert.ok(cold.some(([a, b]) => a === 64 && b === 64), `PBKDF2 hex compared: ${JSON.stringify(cold)}`);
    assert.equal((await session([['Authorization', basicValue('carla', 'carla-pass')]])).json.userCtx.name, 'carla');
    const cached = await comparedDuring(() => session([['Authorization', basicValue('carla', 'still-not-it')]]));
    assert.ok(cached.length >= 1, `the cache compares too: ${JSON.stringify(cached)}`);
    assert.ok(cached.every(([a, b]) => a === b && a >= 32), `full-length digests: ${JSON.stringify(cached)}`);
  });

  test('a wrong server-admin password ([admins] pbkdf2 hash): compared in constant time, cold and cached', async () => {
    const cold = await comparedDuring(() => session([['Authorization', basicValue('ops', 'not-the-admin-password')]]));
    assert.ok(cold.some(([a, b]) => a === 64 && b === 64), `PBKDF2 hex compared: ${JSON.stringify(cold)}`);
    // root authenticated while the test set up, so its verified password is cached.
    const cached = await comparedDuring(() => session([['Authorization', basicValue('root', 'not-the-admin-password')]]));
    assert.ok(cached.some(([a, b]) => a === b && a >= 32), JSON.stringify(cached));
  });

  test('a wrong TOTP code with the right password: all three window codes compared in constant time', async () => {
    const seed = Buffer.from('12345678901234567890');
    const codeAt = (step: number): string => {
      const message = Buffer.alloc(8);
      message.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30000) + step));
      const mac = createHmac('sha1', seed).update(message).digest();
      return String((mac.readUInt32BE(mac[mac.length - 1]! & 0xf) & 0x7fffffff) % 1e6).padStart(6, '0');
    };
    const valid = new Set([-2, -1, 0, 1, 2].map(codeAt));
    const wrong = ['000000', '111111', '222222'].find((candidate) => !valid.has(candidate))!;
    for (const token of [wrong, 'abcdef', '12345']) {
      let res;
      const calls = await comparedDuring(async () => {
        res = await raw(port, { method: 'POST', target: '/_session', headers: [['Content-Type', 'application/json']], body: JSON.stringify({ name: 'tess', password: 'tess-pass', token }) });
      });
      assert.equal(res!.status, 401, token);
      // t-30 s, t and t+30 s; a malformed code is compared against a stand-in, at the same cost.
      assert.equal(calls.filter(([a, b]) => a === 6 && b === 6).length, 3, `${token}: ${JSON.stringify(calls)}`);
    }
  });

  test('a JWT with a wrong HMAC: verified by WebCrypto (constant time), never compared as text', async () => {
    const b64 = (text: string): string => Buffer.from(text).toString('base64url');
    const input = `${b64('{"alg":"HS256"}')}.${b64(JSON.stringify({ sub: 'jwt-user', exp: Math.floor(Date.now() / 1000) + 600 }))}`;
    const good = createHmac('sha256', HMAC_KEY).update(input).digest();
    const wrong = Buffer.from(good);
    wrong[31]! ^= 1;
    const before = webcryptoVerifications.length;
    const res = await session([['Authorization', `Bearer ${input}.${wrong.toString('base64url')}`]]);
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, { error: 'bad_request', reason: 'Bad HMAC' });
    assert.deepEqual(webcryptoVerifications.slice(before), ['HMAC']);
    const ok = await session([['Authorization', `Bearer ${input}.${good.toString('base64url')}`]]);
    assert.equal(ok.json.userCtx.name, 'jwt-user', 'the control');
  });
});
