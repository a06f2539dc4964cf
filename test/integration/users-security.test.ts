// The reproductions of security issue items 4, 5, 9 and 11, against the compiled binary over real
// HTTP, as an outsider would send them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bearer as signedBearer, externalAuthIni } from '../support/external-auth.js';
import { request, type HttpOptions } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

const ADMIN: [string, string] = ['admin', 'admin-pass'];
const SECRET = Buffer.from('integration-users-hmac-secret-0123456789');
const USER = 'org.couchdb.user:';

const bearer = (sub: string) => signedBearer(SECRET, sub);
const userDoc = (name: string, password: string, extra: Record<string, unknown> = {}) => ({ _id: USER + name, name, type: 'user', roles: [], password, ...extra });

/** One binary with per-user databases, JWT and proxy authentication, cheap hashes; sign-up open or not. */
async function start(openSignup: boolean): Promise<{ divan: RunningDivan; call: (path: string, options?: HttpOptions) => ReturnType<typeof request>; close: () => Promise<void> }> {
  const data = mkdtempSync(join(tmpdir(), 'divan-users-security-'));
  const ini = join(data, 'divan.ini');
  writeFileSync(
    ini,
    [
      '[admins]',
      `${ADMIN[0]} = ${ADMIN[1]}`,
      '[chttpd_auth]',
      'iterations = 1000',
      '[chttpd_auth_lockout]',
      'mode = off',
      '[couchdb]',
      `users_db_security_editable = ${openSignup}`,
      '[couch_peruser]',
      'enable = true',
      'delete_dbs = true',
      externalAuthIni(SECRET),
    ].join('\n'),
  );
  const divan = await startDivan(['--port', '0', '--data', data, '--config', ini]);
  const call = (path: string, options: HttpOptions = {}) => request(divan.url, path, options);
  if (openSignup) assert.equal((await call('/_users/_security', { method: 'PUT', auth: ADMIN, body: {} })).status, 200);
  return {
    divan,
    call,
    close: async () => {
      try {
        assert.equal(await divan.stop(), 0);
      } finally {
        rmSync(data, { recursive: true, force: true });
      }
    },
  };
}

describe('the real binary, sign-up open', () => {
  let server: Awaited<ReturnType<typeof start>>;
  before(async () => {
    server = await start(true);
  });
  after(async () => server.close());

  test("item 4: the name that shares bob's userdb-626f62 cannot sign up, join it, or delete it", async () => {
    const { call } = server;
    assert.equal((await call(`/_users/${USER}bob`, { method: 'PUT', body: userDoc('bob', 'bob-pass') })).status, 201);
    const twin = '\u0006&\u000f\u0006\u0002';
    // The attack: sign up as the twin, read bob's database, then delete the twin's own user.
    const signup = await call('/_users', { method: 'POST', body: userDoc(twin, 'twin-pass') });
    const read = await call('/userdb-626f62/_all_docs', { auth: [twin, 'twin-pass'] });
    if (signup.status === 201) {
      await call(`/_users/${encodeURIComponent(USER + twin)}?rev=${signup.body.rev}`, { method: 'DELETE', auth: [twin, 'twin-pass'] });
    }
    assert.equal(signup.status, 403, signup.text);
    assert.equal(read.status, 401, 'the twin has no account');
    assert.deepEqual((await call('/userdb-626f62/_security', { auth: ADMIN })).body.members.names, ['bob']);
    const token = await call('/_session', { headers: await bearer(twin) });
    assert.deepEqual([token.status, token.body.error], [400, 'bad_request'], 'a token naming the twin is refused');
    assert.equal((await call('/userdb-626f62', { auth: ADMIN })).status, 200, "bob's database is still there");
  });

  test("item 5: an anonymous document named like the admin lends no totp, and a conflicting batch cannot lock the admin out", async () => {
    const { call } = server;
    const squat = await call(`/_users/${USER}admin`, { method: 'PUT', body: userDoc('admin', 'squat', { totp: { key: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' } }) });
    assert.equal(squat.status, 201, squat.text);
    assert.equal((await call('/_session', { auth: ADMIN })).status, 200, 'Basic still works for the admin');
    const login = await call('/_session', { method: 'POST', body: { name: ADMIN[0], password: ADMIN[1] } });
    assert.equal(login.status, 200, login.text);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const conflicting = [
      { ...userDoc('admin', 'a'), _rev: '1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', _id: `${USER}admin` },
      { ...userDoc('admin', 'b'), _rev: '1-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', _id: `${USER}admin` },
    ];
    await call('/_users/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: conflicting } });
    assert.equal((await call('/_session', { auth: ADMIN })).status, 200, 'Basic after the batch');
    assert.equal((await call('/_session', { method: 'POST', body: { name: ADMIN[0], password: ADMIN[1] } })).status, 200, 'login after the batch');
    const session = await call('/_session', { headers: { Cookie: cookie } });
    assert.equal(session.body.userCtx?.name, 'admin', `the cookie after the batch: ${session.text}`);
  });
});

describe('the real binary, sign-up closed (the default)', () => {
  let server: Awaited<ReturnType<typeof start>>;
  before(async () => {
    server = await start(false);
  });
  after(async () => server.close());

  test('item 9: a JWT-only identity cannot create its own _users document with a password', async () => {
    const { call } = server;
    const res = await call(`/_users/${USER}erin`, { method: 'PUT', headers: await bearer('erin'), body: userDoc('erin', 'lasting') });
    assert.equal(res.status, 403, res.text);
    assert.equal((await call('/_session', { method: 'POST', body: { name: 'erin', password: 'lasting' } })).status, 401);
  });

  test("item 11: a member of acme/_users reads no other user's password hash through _all_docs or _changes", async () => {
    const { call } = server;
    for (const [name, password] of [['mia', 'mia-pass']]) {
      assert.equal((await call(`/_users/${USER}${name}`, { method: 'PUT', auth: ADMIN, body: userDoc(name!, password!) })).status, 201);
    }
    assert.equal((await call('/acme%2F_users', { method: 'PUT', auth: ADMIN })).status, 201);
    assert.equal((await call('/acme%2F_users/_security', { method: 'PUT', auth: ADMIN, body: { members: { names: ['mia'] } } })).status, 200);
    assert.equal((await call(`/acme%2F_users/${USER}nia`, { method: 'PUT', auth: ADMIN, body: userDoc('nia', 'nia-pass') })).status, 201);
    const { derived_key: derivedKey } = (await call(`/acme%2F_users/${USER}nia`, { auth: ADMIN })).body;
    assert.equal(typeof derivedKey, 'string');
    for (const path of ['/acme%2F_users/_all_docs?include_docs=true', '/acme%2F_users/_changes?include_docs=true']) {
      const res = await call(path, { auth: ['mia', 'mia-pass'] });
      assert.equal(res.status, 200, res.text);
      assert.ok(res.text.includes(`${USER}nia`), `${path} lists nia`);
      assert.ok(!res.text.includes(derivedKey), `${path} leaks nia's derived_key: ${res.text}`);
    }
  });
});
