import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import {
  BAD_CREDENTIALS,
  FAST_INI,
  LOCKED,
  answerOf,
  authSessionOf,
  createUser,
  forbidden,
  freshAddress,
  fromAddress,
  readUser,
  sessionBody,
  userBody,
  userPath,
  whoAmI,
} from '../support/users-helpers.js';

// RFC 6238's seeds as base32: "12345678901234567890" (SHA-1) and the 32-byte SHA-256 one, the
// latter written in lower case with padding (both are accepted).
const SHA1_KEY = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const SHA1_SEED = Buffer.from('12345678901234567890', 'ascii');
const SHA256_KEY = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZA===='.toLowerCase();
const SHA256_SEED = Buffer.from('12345678901234567890123456789012', 'ascii');

/** RFC 6238 code, written independently of src/users/totp.ts. */
function code(seed: Buffer, options: { digest?: string; digits?: number; stepOffset?: number } = {}): string {
  const digits = options.digits ?? 6;
  const counter = Math.floor(Date.now() / 30000) + (options.stepOffset ?? 0);
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(options.digest ?? 'sha1', seed).update(message).digest();
  const offset = mac[mac.length - 1]! & 0xf;
  const value = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(value % 10 ** digits).padStart(digits, '0');
}

/** A code that is none of the three currently accepted ones. */
function wrongCode(seed: Buffer): string {
  const valid = [-1, 0, 1, 2].map((stepOffset) => code(seed, { stepOffset }));
  for (let n = 0; ; n++) {
    const candidate = String(n).padStart(6, '0');
    if (!valid.includes(candidate)) return candidate;
  }
}

const INI = FAST_INI + 'public_fields = name, totp\nusers_db_public = true\n[chttpd_auth_lockout]\nmode = enforce\nthreshold = 3\n';

describe('TOTP two-factor sessions', () => {
  let server: TestServer;

  /** POST /_session from a client address of its own, so lockout counters never leak between tests. */
  const login = (body: Record<string, unknown>, options: { query?: string; address?: string } = {}) =>
    server.request(`/_session${options.query ?? ''}`, { method: 'POST', body, headers: fromAddress(options.address ?? freshAddress()) });

  before(async () => {
    server = await startServer({ ini: INI });
    for (const name of ['otp', 'replayer', 'former', 'locky', 'failer']) await createUser(server, name, `${name}-pass`, ['two'], { totp: { key: SHA1_KEY } });
    await createUser(server, 'otp8', 'otp8-pass', [], { totp: { key: SHA256_KEY, algorithm: 'sha256', length: 8 } });
    await createUser(server, 'eve', 'eve-pass');
  });
  after(async () => server.close());

  describe('the totp member of a user document', () => {
    test('malformed values → 403 forbidden with a reason, and nothing is stored', async () => {
      const cases: Array<[unknown, string]> = [
        ['GEZDGNBV', 'totp must be an object.'],
        [{ key: 'not base32' }, 'totp.key must be a base32 string.'],
        [{ key: SHA1_KEY, algorithm: 'sha1' }, 'totp.algorithm must be sha, sha256 or sha512.'],
        [{ key: SHA1_KEY, length: 10 }, 'totp.length must be 6, 7 or 8.'],
      ];
      for (const [totp, reason] of cases) {
        const res = await server.admin(userPath('malformed'), { method: 'PUT', body: userBody('malformed', 'pw', [], { totp }) });
        assert.deepEqual(answerOf(res), { status: 403, body: forbidden(reason) }, JSON.stringify(totp));
      }
      assert.equal(await readUser(server, 'malformed'), undefined);
      const ok = await server.admin(userPath('malformed'), { method: 'PUT', body: userBody('malformed', 'pw', [], { totp: null }) });
      assert.equal(ok.status, 201, 'null means no second factor');
    });

    test('a user turns TOTP on for themselves; from then on Basic is refused and a code is needed', async () => {
      await createUser(server, 'self', 'self-pass');
      const doc = await server.request(userPath('self'), { auth: ['self', 'self-pass'] });
      assert.equal(doc.status, 200);
      const bad = await server.request(userPath('self'), { method: 'PUT', auth: ['self', 'self-pass'], body: { ...doc.body, totp: { key: SHA1_KEY, length: 5 } } });
      assert.deepEqual(answerOf(bad), { status: 403, body: forbidden('totp.length must be 6, 7 or 8.') });
      const put = await server.request(userPath('self'), { method: 'PUT', auth: ['self', 'self-pass'], body: { ...doc.body, totp: { key: SHA1_KEY } } });
      assert.equal(put.status, 201, put.text);
      assert.deepEqual(answerOf(await whoAmI(server, { auth: ['self', 'self-pass'] })), { status: 401, body: BAD_CREDENTIALS });
      assert.deepEqual(answerOf(await login({ name: 'self', password: 'self-pass' })), { status: 401, body: BAD_CREDENTIALS });
      assert.equal((await login({ name: 'self', password: 'self-pass', token: code(SHA1_SEED) })).status, 200);
    });

    test('the key is shown to admins and the owner only, even when public_fields names totp', async () => {
      assert.deepEqual((await readUser(server, 'otp'))!['totp'], { key: SHA1_KEY });
      const asEve = await server.request(userPath('otp'), { auth: ['eve', 'eve-pass'] });
      assert.equal(asEve.status, 200);
      assert.deepEqual(asEve.body, { _id: 'org.couchdb.user:otp', _rev: asEve.body._rev, name: 'otp' });
    });
  });

  describe('POST /_session', () => {
    test('end to end: password + current code (JSON) → 200 and a cookie that works as usual; the owner reads their key with it', async () => {
      const res = await login({ name: 'otp', password: 'otp-pass', token: code(SHA1_SEED) });
      assert.deepEqual(answerOf(res), { status: 200, body: { ok: true, name: 'otp', roles: ['two'] } });
      const cookie = authSessionOf(res)!;
      assert.match(cookie, /^AuthSession=[A-Za-z0-9_-]+/);
      assert.deepEqual((await whoAmI(server, { cookie })).body, sessionBody('otp', ['two'], 'cookie'));
      const own = await server.request(userPath('otp'), { headers: { Cookie: cookie } });
      assert.equal(own.status, 200);
      assert.deepEqual(own.body.totp, { key: SHA1_KEY });
    });

    test('form login with the next step\'s code (t+30 s); the current code is then refused as an older one', async () => {
      const form = (token: string) =>
        server.request('/_session', {
          method: 'POST',
          body: new URLSearchParams({ name: 'former', password: 'former-pass', token }).toString(),
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...fromAddress(freshAddress()) },
        });
      const res = await form(code(SHA1_SEED, { stepOffset: 1 }));
      assert.deepEqual(answerOf(res), { status: 200, body: { ok: true, name: 'former', roles: ['two'] } });
      assert.deepEqual(answerOf(await form(code(SHA1_SEED))), { status: 401, body: BAD_CREDENTIALS });
    });

    test('replay: a code that logged in once is refused (401, clearing cookie)', async () => {
      const token = code(SHA1_SEED);
      assert.equal((await login({ name: 'replayer', password: 'replayer-pass', token })).status, 200);
      const again = await login({ name: 'replayer', password: 'replayer-pass', token });
      assert.deepEqual(answerOf(again), { status: 401, body: BAD_CREDENTIALS });
      assert.match(String(again.headers['set-cookie']), /^AuthSession=;/);
    });

    test('a wrong or missing code → 401 and the clearing cookie, like a wrong password; ?fail= redirects', async () => {
      for (const body of [
        { name: 'failer', password: 'failer-pass', token: wrongCode(SHA1_SEED) },
        { name: 'failer', password: 'failer-pass' },
        { name: 'failer', password: 'failer-pass', token: '' },
        { name: 'failer', password: 'wrong', token: code(SHA1_SEED) },
      ]) {
        const res = await login(body);
        assert.deepEqual(answerOf(res), { status: 401, body: BAD_CREDENTIALS }, JSON.stringify(body));
        assert.match(String(res.headers['set-cookie']), /^AuthSession=;/);
        assert.equal(res.headers['www-authenticate'], undefined);
      }
      const redirected = await login({ name: 'failer', password: 'failer-pass', token: wrongCode(SHA1_SEED) }, { query: '?fail=/login-failed' });
      assert.equal(redirected.status, 302);
      assert.equal(redirected.headers['location'], `${server.url}/login-failed`);
      assert.deepEqual(redirected.body, BAD_CREDENTIALS);
      // The wrong-password try above did not spend the code.
      const next = await login({ name: 'failer', password: 'failer-pass', token: code(SHA1_SEED) }, { query: '?next=/app' });
      assert.equal(next.status, 302);
      assert.equal(next.headers['location'], `${server.url}/app`);
    });

    test('a code must be a JSON string', async () => {
      const res = await login({ name: 'otp', password: 'otp-pass', token: Number(code(SHA1_SEED)) });
      assert.equal(res.status, 400);
    });

    test('algorithm and length of the document are used (sha256, 8 digits)', async () => {
      assert.deepEqual(answerOf(await login({ name: 'otp8', password: 'otp8-pass', token: code(SHA256_SEED) })), { status: 401, body: BAD_CREDENTIALS });
      assert.deepEqual(answerOf(await login({ name: 'otp8', password: 'otp8-pass', token: code(SHA1_SEED, { digits: 8 }) })), { status: 401, body: BAD_CREDENTIALS });
      const res = await login({ name: 'otp8', password: 'otp8-pass', token: code(SHA256_SEED, { digest: 'sha256', digits: 8 }) });
      assert.deepEqual(answerOf(res), { status: 200, body: { ok: true, name: 'otp8', roles: [] } });
    });

    test('lockout: wrong codes count; then even the right password and code get 403 from that client', async () => {
      const address = freshAddress();
      for (let i = 0; i < 3; i++) {
        const res = await login({ name: 'locky', password: 'locky-pass', token: wrongCode(SHA1_SEED) }, { address });
        assert.deepEqual(answerOf(res), { status: 401, body: BAD_CREDENTIALS }, `attempt ${i + 1}`);
      }
      const locked = await login({ name: 'locky', password: 'locky-pass', token: code(SHA1_SEED) }, { address });
      assert.deepEqual(answerOf(locked), { status: 403, body: LOCKED });
      // Another client is not locked, and the code was not spent by the locked attempt.
      assert.equal((await login({ name: 'locky', password: 'locky-pass', token: code(SHA1_SEED) })).status, 200);
    });
  });
});
