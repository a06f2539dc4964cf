import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Config } from '../../../src/config/config.js';
import { isCouchError } from '../../../src/errors/couch-error.js';
import { Logger } from '../../../src/log/logger.js';
import { Admins } from '../../../src/users/admins.js';
import type { HashUpgrader } from '../../../src/users/hash-upgrader.js';
import { Lockout } from '../../../src/users/lockout.js';
import { PasswordAuthenticator } from '../../../src/users/password-authenticator.js';
import { VerifiedPasswordCache } from '../../../src/users/password-cache.js';
import { totpCode } from '../../../src/users/totp.js';
import { TotpReplayGuard } from '../../../src/users/totp-replay.js';
import { credentialsFromDoc, type UserCredentials } from '../../../src/users/user-documents.js';
import type { UserStore } from '../../../src/users/user-store.js';

// The RFC 6238 SHA-1 seed, "12345678901234567890", in base32.
const KEY = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const SEED = Buffer.from('12345678901234567890', 'ascii');
const SALT = '0123456789abcdef0123456789abcdef';
const PEER = '10.0.0.1';
const STEP = 41152263; // T = 1234567890
const T0 = STEP * 30 * 1000; // the first millisecond of that step

const sha1Hex = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex');
const code = (counter: number, length = 6) => totpCode(SEED, counter, 'sha', length);

function userDoc(name: string, password: string, extra: Record<string, unknown> = {}) {
  return {
    _id: `org.couchdb.user:${name}`,
    _rev: '1-a',
    name,
    type: 'user',
    roles: ['r'],
    password_scheme: 'simple',
    salt: SALT,
    password_sha: sha1Hex(password + SALT),
    ...extra,
  };
}

const BAD = { status: 401, reason: 'Name or password is incorrect.' };
const LOCKED = { status: 403, reason: 'Account is temporarily locked due to multiple authentication failures' };

async function outcome(attempt: Promise<unknown>): Promise<{ status: number; reason: string } | 'ok'> {
  try {
    await attempt;
    return 'ok';
  } catch (error) {
    if (!isCouchError(error)) throw error;
    return { status: error.status, reason: error.reason };
  }
}

describe('PasswordAuthenticator with a second factor (injected clock)', () => {
  let dir: string;
  let config: Config;
  let now: number;
  let lockout: Lockout;
  let cache: VerifiedPasswordCache;
  let upgrades: number;
  let logs: string[];
  let authenticator: PasswordAuthenticator;
  const docs = new Map<string, UserCredentials>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'divan-totp-'));
    writeFileSync(join(dir, 'default.ini'), '');
    // An admin with a same-named user doc that has a second factor.
    writeFileSync(join(dir, 'local.ini'), `[admins]\nboss = -hashed-${sha1Hex('boss-pass' + SALT)},${SALT}\n`);
    config = await Config.load({ defaultsFile: join(dir, 'default.ini'), files: [join(dir, 'local.ini')], writableFile: join(dir, 'local.ini') });
    for (const doc of [
      userDoc('otp', 'otp-pass', { totp: { key: KEY } }),
      userDoc('long', 'long-pass', { totp: { key: KEY.toLowerCase(), length: 8, algorithm: 'sha' } }),
      userDoc('broken', 'broken-pass', { totp: { key: 'x' } }),
      userDoc('plain', 'plain-pass'),
      userDoc('boss', 'doc-pass', { totp: { key: KEY } }),
    ]) {
      docs.set(doc.name, credentialsFromDoc(doc)!);
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  beforeEach(() => {
    now = T0;
    upgrades = 0;
    logs = [];
    lockout = new Lockout({ mode: 'enforce', threshold: 3, maxObjects: 100, maxLifetimeMs: 300000 }, () => now);
    cache = new VerifiedPasswordCache({ enabled: true, maxObjects: 100, maxIdleMs: 600000, now: () => now });
    const log = new Logger('warning', { write: (line: string) => logs.push(line) });
    authenticator = new PasswordAuthenticator({
      config,
      admins: new Admins(config, log),
      users: {
        lookup: async (name: string) => docs.get(name),
        rolesOf: async (name: string) => docs.get(name)?.roles ?? [],
        lookupNow: (name: string) => docs.get(name),
        rolesOfNow: (name: string) => docs.get(name)?.roles ?? [],
      } as unknown as UserStore,
      cache,
      lockout,
      upgrader: { maybeUpgrade: () => void upgrades++ } as unknown as HashUpgrader,
      log,
      now: () => now,
      usedCodes: new TotpReplayGuard(),
    });
  });

  const login = (name: string, password: string, token?: string, peer = PEER) => outcome(authenticator.authenticate(name, password, peer, 'session', token));

  test('password and current code → the user; the code is then spent', async () => {
    assert.equal(await login('otp', 'otp-pass', code(STEP)), 'ok');
    assert.deepEqual(await login('otp', 'otp-pass', code(STEP)), BAD, 'replayed within its window');
    now += 30000;
    assert.deepEqual(await login('otp', 'otp-pass', code(STEP)), BAD, 'replayed in the next step');
    assert.equal(await login('otp', 'otp-pass', code(STEP + 1)), 'ok');
  });

  test('an older code is refused once a newer one was used', async () => {
    assert.equal(await login('otp', 'otp-pass', code(STEP + 1)), 'ok');
    assert.deepEqual(await login('otp', 'otp-pass', code(STEP)), BAD);
    assert.deepEqual(await login('otp', 'otp-pass', code(STEP - 1)), BAD);
  });

  test('window edges through authenticate: t−30 s and t+30 s pass, t±60 s do not', async () => {
    now = T0 + 30000; // step STEP+1: codes of STEP, STEP+1, STEP+2
    assert.deepEqual(await login('otp', 'otp-pass', code(STEP - 1)), BAD, 'two steps old');
    assert.deepEqual(await login('otp', 'otp-pass', code(STEP + 3)), BAD, 'two steps ahead');
    assert.equal(await login('otp', 'otp-pass', code(STEP)), 'ok', 'one step old');
    assert.equal(await login('otp', 'otp-pass', code(STEP + 2)), 'ok', 'one step ahead');
  });

  test('the user settings are honoured: 8 digits, lower-case key', async () => {
    assert.deepEqual(await login('long', 'long-pass', code(STEP)), BAD, 'a 6-digit code');
    assert.equal(await login('long', 'long-pass', code(STEP, 8)), 'ok');
  });

  test('missing, empty or malformed tokens → 401', async () => {
    for (const [index, token] of [undefined, '', 'abcdef', `${code(STEP)} `].entries()) {
      assert.deepEqual(await login('otp', 'otp-pass', token, `10.0.1.${index}`), BAD, JSON.stringify(token));
    }
  });

  test('an unusable stored totp never lets anyone in', async () => {
    assert.deepEqual(await login('broken', 'broken-pass', code(STEP)), BAD);
    assert.deepEqual(await login('broken', 'broken-pass'), BAD);
  });

  test('users without a second factor ignore the token', async () => {
    assert.equal(await login('plain', 'plain-pass'), 'ok');
    assert.equal(await login('plain', 'plain-pass', 'whatever'), 'ok');
  });

  test('an admin whose same-named user doc has a totp logs in with the admin password alone, taking only the roles', async () => {
    const user = await authenticator.authenticate('boss', 'boss-pass', PEER, 'session');
    assert.deepEqual(user, { roles: ['_admin', 'r'], salt: SALT, hasTotp: false });
    assert.equal(await outcome(authenticator.authenticate('boss', 'boss-pass', PEER, 'basic')), 'ok', 'Basic too');
    assert.deepEqual(await login('boss', 'doc-pass', code(STEP)), BAD, "the document's password never opens an admin name");
  });

  test('Basic never passes, whatever the token', async () => {
    const basic = await outcome(authenticator.authenticate('otp', 'otp-pass', PEER, 'basic', code(STEP)));
    assert.deepEqual(basic, BAD);
  });

  test('000000 is not a valid code around T0 (the wrong code of the tests below)', () => {
    assert.ok(![STEP - 1, STEP, STEP + 1, STEP + 2].map((counter) => code(counter)).includes('000000'));
  });

  test('a wrong code counts toward lockout; once locked, the 403 comes before the code is looked at', async () => {
    for (let i = 0; i < 3; i++) assert.deepEqual(await login('otp', 'otp-pass', '000000'), BAD);
    assert.equal(lockout.isLocked(PEER, 'otp', SALT), true);
    assert.deepEqual(await login('otp', 'otp-pass', code(STEP)), LOCKED, 'right password and code');
    assert.equal(await login('otp', 'otp-pass', code(STEP), '10.0.0.2'), 'ok', 'another client, and the code was not spent by the locked try');
    assert.ok(logs.some((line) => line.includes('wrong or missing TOTP code')));
  });

  test('a repeated Basic check answers without a promise; wrong passwords against the cache still count toward lockout', async () => {
    assert.equal(await outcome(authenticator.authenticate('plain', 'plain-pass', PEER, 'basic')), 'ok');
    const again = authenticator.check('plain', 'plain-pass', PEER, 'basic');
    assert.ok(!(again instanceof Promise), 'credentials and password cached, lockout idle');
    assert.deepEqual(again.roles, ['r']);
    for (let i = 0; i < 3; i++) {
      assert.throws(() => authenticator.check('plain', 'wrong', PEER, 'basic'), (error: unknown) => isCouchError(error) && error.status === 401);
    }
    assert.equal(lockout.isLocked(PEER, 'plain', SALT), true);
    assert.deepEqual(await outcome(authenticator.authenticate('plain', 'plain-pass', PEER, 'basic')), LOCKED);
    assert.equal(await outcome(authenticator.authenticate('plain', 'plain-pass', '10.0.0.2', 'basic')), 'ok', 'another client');
  });

  test('missing and replayed codes count toward lockout too', async () => {
    assert.equal(await login('otp', 'otp-pass', code(STEP)), 'ok');
    assert.deepEqual(await login('otp', 'otp-pass', code(STEP)), BAD);
    assert.deepEqual(await login('otp', 'otp-pass'), BAD);
    assert.equal(lockout.isLocked(PEER, 'otp', SALT), false);
    assert.deepEqual(await login('otp', 'otp-pass', ''), BAD);
    assert.equal(lockout.isLocked(PEER, 'otp', SALT), true);
    assert.ok(logs.some((line) => line.includes('replayed TOTP code')));
  });

  test('a wrong password with the right code counts once, and does not spend the code', async () => {
    assert.deepEqual(await login('otp', 'guess', code(STEP)), BAD);
    assert.deepEqual(await login('otp', 'guess', code(STEP)), BAD);
    assert.equal(lockout.isLocked(PEER, 'otp', SALT), false, 'two failures, not four');
    assert.equal(await login('otp', 'otp-pass', code(STEP)), 'ok');
  });

  test('a right password with a wrong code is neither cached nor upgraded (no timing hint of the password)', async () => {
    assert.deepEqual(await login('otp', 'otp-pass', '000000'), BAD);
    assert.equal(cache.check('otp', SALT, 'otp-pass'), undefined);
    assert.equal(upgrades, 0);
    assert.equal(await login('otp', 'otp-pass', code(STEP)), 'ok');
    assert.equal(cache.check('otp', SALT, 'otp-pass'), true);
    assert.equal(upgrades, 1);
  });
});
