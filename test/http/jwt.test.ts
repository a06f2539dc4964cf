import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { generateKeyPair } from '../support/key-pairs.js';
import { startServer, type TestServer } from '../support/server.js';

const JWT_FIRST = '{chttpd_auth, jwt_authentication_handler}, {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}';
const HMAC_SECRET = randomBytes(32);
const KID_SECRET = randomBytes(32);
const rsa = generateKeyPair({ type: 'rsa', modulusLength: 2048 });
const ec = generateKeyPair({ type: 'ec', namedCurve: 'P-256' });
const pemForIni = (key: { export(options: { type: 'spki'; format: 'pem' }): string | Buffer }): string =>
  String(key.export({ type: 'spki', format: 'pem' })).trim().replace(/\n/g, '\\n');
const now = (): number => Math.floor(Date.now() / 1000);

async function token(
  claims: Record<string, unknown>,
  options: { alg?: string; kid?: string; key?: Parameters<SignJWT['sign']>[0] } = {},
): Promise<string> {
  const header: { alg: string; kid?: string } = { alg: options.alg ?? 'HS256' };
  if (options.kid !== undefined) header.kid = options.kid;
  return new SignJWT(claims).setProtectedHeader(header).sign(options.key ?? HMAC_SECRET);
}

const bearer = (jwt: string): Record<string, string> => ({ Authorization: `Bearer ${jwt}` });

describe('JWT authentication over HTTP', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      ini: [
        '[chttpd]',
        `authentication_handlers = ${JWT_FIRST}`,
        '[jwt_keys]',
        `hmac:_default = ${HMAC_SECRET.toString('base64')}`,
        `hmac:my=kid= = ${KID_SECRET.toString('base64')}`,
        `rsa:_default = ${pemForIni(rsa.publicKey)}`,
        `ec:_default = ${pemForIni(ec.publicKey)}`,
        '[chttpd_auth]',
        'iterations = 1000',
      ].join('\n'),
    });
  });
  after(async () => server.close());

  async function session(headers: Record<string, string>) {
    return server.request('/_session', { headers });
  }

  test('R-JWT-1 R-JWT-3 R-METH-2: a Bearer token authenticates without /_session; sub is the name', async () => {
    const res = await session(bearer(await token({ sub: 'jan', exp: now() + 60, '_couchdb.roles': ['writer'] })));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.userCtx, { name: 'jan', roles: ['writer'] });
    assert.equal(res.body.info.authenticated, 'jwt');
    assert.equal(res.headers['set-cookie'], undefined, 'a JWT never gets a session cookie');
  });

  test('R-JWT-5: hmac, rsa and ec _default keys from [jwt_keys] (PEM with \\n escapes) verify their algorithms', async () => {
    for (const [alg, key] of [['HS256', HMAC_SECRET], ['HS512', HMAC_SECRET], ['RS256', rsa.privateKey], ['RS512', rsa.privateKey], ['ES256', ec.privateKey]] as const) {
      const res = await session(bearer(await token({ sub: `u-${alg}`, exp: now() + 60 }, { alg, key })));
      assert.equal(res.status, 200, `${alg}: ${res.text}`);
      assert.equal(res.body.userCtx.name, `u-${alg}`);
    }
  });

  test('R-JWT-4 R-JWT-11 R-VER-1: kid selects <kind>:<kid>, even a kid with = (ini key written with " = ")', async () => {
    const res = await session(bearer(await token({ sub: 'k', exp: now() + 60 }, { kid: 'my=kid=', key: KID_SECRET })));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.userCtx.name, 'k');
  });

  test('R-JWT-4: an unknown kid is 400 Unknown kid, with no fallback to _default', async () => {
    const res = await session(bearer(await token({ sub: 'k', exp: now() + 60 }, { kid: 'nope', key: HMAC_SECRET })));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'bad_request', reason: 'Unknown kid' });
  });

  test('R-JWT-2 R-JWT-6: alg is mandatory; none is refused', async () => {
    const payload = Buffer.from(JSON.stringify({ sub: 'x', exp: now() + 60 })).toString('base64url');
    const noAlg = `${Buffer.from('{"typ":"JWT"}').toString('base64url')}.${payload}.c2ln`;
    assert.deepEqual((await session(bearer(noAlg))).body, { error: 'bad_request', reason: 'Missing alg header parameter' });
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    const res = await session(bearer(none));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'bad_request', reason: 'Invalid alg header parameter' });
  });

  test('R-JWT-6: a token signed with an untrusted key, or tampered with, is refused', async () => {
    const foreign = await token({ sub: 'x', exp: now() + 60 }, { key: randomBytes(32) });
    assert.deepEqual((await session(bearer(foreign))).body, { error: 'bad_request', reason: 'Bad HMAC' });
    const good = await token({ sub: 'x', exp: now() + 60, '_couchdb.roles': [] }, { alg: 'RS256', key: rsa.privateKey });
    const [h, , s] = good.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'x', exp: now() + 60, '_couchdb.roles': ['_admin'] })).toString('base64url')}.${s}`;
    assert.deepEqual((await session(bearer(forged))).body, { error: 'bad_request', reason: 'Bad signature' });
  });

  test('HS256 signed with the RSA public key PEM as the secret is refused (no key confusion)', async () => {
    const pem = Buffer.from(String(rsa.publicKey.export({ type: 'spki', format: 'pem' })));
    const res = await session(bearer(await token({ sub: 'x', exp: now() + 60 }, { alg: 'HS256', key: pem })));
    assert.equal(res.status, 400);
    assert.equal(res.body.reason, 'Bad HMAC');
  });

  test('R-JWT-9 R-ERR-3: a missing required claim (exp by default) is 400 Missing exp claim', async () => {
    const res = await session(bearer(await token({ sub: 'x' })));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'bad_request', reason: 'Missing exp claim' });
  });

  test('an expired token is 401 exp not in future; a missing sub is 401 Token missing sub claim.', async () => {
    const expired = await session(bearer(await token({ sub: 'x', exp: now() - 1 })));
    assert.equal(expired.status, 401);
    assert.deepEqual(expired.body, { error: 'unauthorized', reason: 'exp not in future' });
    const noSub = await session(bearer(await token({ exp: now() + 60 })));
    assert.equal(noSub.status, 401);
    assert.deepEqual(noSub.body, { error: 'unauthorized', reason: 'Token missing sub claim.' });
  });

  test('R-JWT-10 R-VER-3: only required claims are validated: with required_claims = {iss, "me"} an expired exp and future nbf are ignored', async () => {
    await server.admin('/_node/_local/_config/jwt_auth/required_claims', { method: 'PUT', body: JSON.stringify('{iss, "me"}') });
    try {
      const ok = await session(bearer(await token({ sub: 'x', iss: 'me', exp: now() - 100, nbf: now() + 100 })));
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.userCtx.name, 'x');
      const wrongIss = await session(bearer(await token({ sub: 'x', iss: 'you' })));
      assert.deepEqual(wrongIss.body, { error: 'bad_request', reason: 'Invalid iss claim' });
      const noIss = await session(bearer(await token({ sub: 'x' })));
      assert.deepEqual(noIss.body, { error: 'bad_request', reason: 'Missing iss claim' });
    } finally {
      await server.admin('/_node/_local/_config/jwt_auth/required_claims', { method: 'DELETE' });
    }
  });

  test('R-JWT-7 R-JWT-8 R-VER-2: roles as an array or a comma string are equal; roles_claim_name and roles_claim_path choose the claim', async () => {
    const asArray = await session(bearer(await token({ sub: 'r', exp: now() + 60, '_couchdb.roles': ['a', 'b'] })));
    const asString = await session(bearer(await token({ sub: 'r', exp: now() + 60, '_couchdb.roles': 'a, b' })));
    assert.deepEqual(asArray.body.userCtx.roles, ['a', 'b']);
    assert.deepEqual(asString.body.userCtx.roles, ['a', 'b']);
    await server.admin('/_node/_local/_config/jwt_auth/roles_claim_name', { method: 'PUT', body: '"my._couchdb.roles"' });
    try {
      const named = await session(bearer(await token({ sub: 'r', exp: now() + 60, 'my._couchdb.roles': ['literal-dots'] })));
      assert.deepEqual(named.body.userCtx.roles, ['literal-dots']);
      await server.admin('/_node/_local/_config/jwt_auth/roles_claim_path', { method: 'PUT', body: '"realm_access.roles"' });
      const keycloak = await session(bearer(await token({ sub: 'r', exp: now() + 60, realm_access: { roles: ['kc-user'] } })));
      assert.deepEqual(keycloak.body.userCtx.roles, ['kc-user'], 'roles_claim_path wins over roles_claim_name');
      const missing = await session(bearer(await token({ sub: 'r', exp: now() + 60 })));
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.body, { error: 'not_found', reason: 'missing json key: realm_access' });
    } finally {
      await server.admin('/_node/_local/_config/jwt_auth/roles_claim_path', { method: 'DELETE' });
      await server.admin('/_node/_local/_config/jwt_auth/roles_claim_name', { method: 'DELETE' });
    }
  });

  test('the key ring is rebuilt on a _config change: a PEM put through _config works at once, a replaced secret stops working', async () => {
    const other = generateKeyPair({ type: 'rsa', modulusLength: 2048 });
    const put = await server.admin(`/_node/_local/_config/jwt_keys/${encodeURIComponent('rsa:rotated')}`, { method: 'PUT', body: JSON.stringify(pemForIni(other.publicKey)) });
    assert.equal(put.status, 200);
    const viaNewKey = await session(bearer(await token({ sub: 'n', exp: now() + 60 }, { alg: 'RS256', kid: 'rotated', key: other.privateKey })));
    assert.equal(viaNewKey.status, 200, viaNewKey.text);
    const oldToken = await token({ sub: 'o', exp: now() + 60 });
    assert.equal((await session(bearer(oldToken))).status, 200);
    const replacement = randomBytes(32);
    await server.admin(`/_node/_local/_config/jwt_keys/${encodeURIComponent('hmac:_default')}`, { method: 'PUT', body: JSON.stringify(replacement.toString('base64')) });
    try {
      assert.deepEqual((await session(bearer(oldToken))).body, { error: 'bad_request', reason: 'Bad HMAC' }, 'even a token verified (and cached) before');
      assert.equal((await session(bearer(await token({ sub: 'o', exp: now() + 60 }, { key: replacement })))).status, 200);
    } finally {
      await server.admin(`/_node/_local/_config/jwt_keys/${encodeURIComponent('hmac:_default')}`, { method: 'PUT', body: JSON.stringify(HMAC_SECRET.toString('base64')) });
    }
  });

  test('JWT roles decide database access; a bad token never falls through to Basic', async () => {
    await server.admin('/jwtdb', { method: 'PUT' });
    await server.admin('/jwtdb/_security', { method: 'PUT', body: { members: { roles: ['readers'] } } });
    await server.admin('/jwtdb/doc', { method: 'PUT', body: { v: 1 } });
    assert.equal((await server.request('/jwtdb/doc', { headers: bearer(await token({ sub: 'r', exp: now() + 60, '_couchdb.roles': ['readers'] })) })).status, 200);
    assert.equal((await server.request('/jwtdb/doc', { headers: bearer(await token({ sub: 'r', exp: now() + 60 })) })).status, 403);
    assert.equal((await server.request('/_session', { headers: { Authorization: 'Bearer garbage' } })).status, 400);
  });
});

describe('JWT on several nodes and outside the chain', () => {
  test('R-JWT-12: two nodes holding the same key list accept the same token', async () => {
    const ini = `[chttpd]\nauthentication_handlers = ${JWT_FIRST}\n[jwt_keys]\nhmac:_default = ${HMAC_SECRET.toString('base64')}\n`;
    const [a, b] = await Promise.all([startServer({ ini }), startServer({ ini })]);
    try {
      const jwt = await token({ sub: 'everywhere', exp: now() + 60 });
      for (const node of [a, b]) {
        const res = await node.request('/_session', { headers: bearer(jwt) });
        assert.equal(res.body.userCtx.name, 'everywhere');
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('R-METH-4: a Bearer token is ignored when the jwt handler is not in the chain', async () => {
    const server = await startServer({ ini: `[jwt_keys]\nhmac:_default = ${HMAC_SECRET.toString('base64')}\n` });
    try {
      const res = await server.request('/_session', { headers: bearer('not even a token') });
      assert.equal(res.status, 200);
      assert.equal(res.body.userCtx.name, null);
    } finally {
      await server.close();
    }
  });
});
