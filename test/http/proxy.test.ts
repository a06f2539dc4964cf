import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

const PROXY_FIRST = '{chttpd_auth, proxy_authentication_handler}, {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}';
const SHA256_FOO = '3f0786e96b20b0102b77f1a49c041be6977cfb3bf78c41a12adc121cd9b4e68a';
const SHA1_FOO = '22047ebd7c4ec67dfbcbad7213a693249dbfbf86';

function proxyHeaders(name: string, roles?: string, token?: string): Record<string, string> {
  const headers: Record<string, string> = { 'X-Auth-CouchDB-UserName': name };
  if (roles !== undefined) headers['X-Auth-CouchDB-Roles'] = roles;
  if (token !== undefined) headers['X-Auth-CouchDB-Token'] = token;
  return headers;
}

describe('proxy authentication', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: `[chttpd]\nauthentication_handlers = ${PROXY_FIRST}\n[chttpd_auth]\nsecret = the_secret\nproxy_use_secret = true\niterations = 1000\n` });
  });
  after(async () => server.close());

  async function session(headers: Record<string, string>): Promise<{ name: string | null; roles: string[]; authenticated?: string; status: number }> {
    const res = await server.request('/_session', { headers });
    return { status: res.status, name: res.body?.userCtx?.name, roles: res.body?.userCtx?.roles, authenticated: res.body?.info?.authenticated };
  }

  test('the vectors of the reference: HMAC-SHA256 and HMAC-SHA1 of foo under the_secret', () => {
    assert.equal(createHmac('sha256', 'the_secret').update('foo').digest('hex'), SHA256_FOO);
    assert.equal(createHmac('sha1', 'the_secret').update('foo').digest('hex'), SHA1_FOO);
  });

  test('R-PROXY-1 R-PROXY-2 R-PROXY-5 R-PROXY-4: the headers alone give the user context, no /_session call needed', async () => {
    await withSecretOff(async () => {
      assert.deepEqual(await session(proxyHeaders('couch@apache.org', 'test_role_1,test_role_2')), {
        status: 200,
        name: 'couch@apache.org',
        roles: ['test_role_1', 'test_role_2'],
        authenticated: 'proxy',
      });
    });
  });

  test('R-INFO-3: authentication_handlers lists proxy in its configured place', async () => {
    const res = await server.request('/_session');
    assert.deepEqual(res.body.info.authentication_handlers, ['proxy', 'cookie', 'default']);
  });

  test('roles are split on commas and trimmed; no roles header gives []', async () => {
    await withSecretOff(async () => {
      assert.deepEqual((await session(proxyHeaders('foo', 'R1, R2 ,  R3'))).roles, ['R1', 'R2', 'R3']);
      assert.deepEqual((await session(proxyHeaders('foo'))).roles, []);
      assert.deepEqual((await session(proxyHeaders('foo', 'a,,b,'))).roles, ['a', 'b']);
    });
  });

  test('R-PROXY-6 / R-PROXY-7: with proxy_use_secret, a lowercase hex HMAC-SHA256 token authenticates', async () => {
    assert.deepEqual(await session(proxyHeaders('foo', 'R1', SHA256_FOO)), { status: 200, name: 'foo', roles: ['R1'], authenticated: 'proxy' });
  });

  test('R-PROXY-7: a SHA-1 token works while sha is in hash_algorithms; uppercase hex works too', async () => {
    assert.equal((await session(proxyHeaders('foo', '', SHA1_FOO))).authenticated, 'proxy');
    assert.equal((await session(proxyHeaders('foo', '', SHA256_FOO.toUpperCase()))).authenticated, 'proxy');
  });

  test('R-PROXY-6: a wrong, missing, non-hex or unlisted-algorithm token falls through to anonymous (never 401/500)', async () => {
    const md5 = createHmac('md5', 'the_secret').update('foo').digest('hex');
    for (const token of [SHA256_FOO.replace(/.$/, '0'), undefined, 'not-hex!', 'abc', md5, '']) {
      const result = await session(proxyHeaders('foo', '_admin', token));
      assert.deepEqual(result, { status: 200, name: null, roles: [], authenticated: undefined }, String(token));
    }
  });

  test('a token for another name does not verify', async () => {
    const result = await session(proxyHeaders('bar', '', SHA256_FOO));
    assert.equal(result.name, null);
  });

  test('hash_algorithms decides which algorithms verify', async () => {
    const sha512 = createHmac('sha512', 'the_secret').update('foo').digest('hex');
    assert.equal((await session(proxyHeaders('foo', '', sha512))).name, null);
    await server.admin('/_node/_local/_config/chttpd_auth/hash_algorithms', { method: 'PUT', body: '"sha512"' });
    try {
      assert.equal((await session(proxyHeaders('foo', '', sha512))).name, 'foo');
      assert.equal((await session(proxyHeaders('foo', '', SHA256_FOO))).name, null, 'sha256 is no longer listed');
    } finally {
      await server.admin('/_node/_local/_config/chttpd_auth/hash_algorithms', { method: 'PUT', body: '"sha256, sha"' });
    }
  });

  test('R-PROXY-1 R-PROXY-2 R-PROXY-3: header names are case-insensitive and configurable (x_auth_username, x_auth_roles, x_auth_token)', async () => {
    assert.equal((await session({ 'x-auth-couchdb-username': 'foo', 'X-AUTH-COUCHDB-TOKEN': SHA256_FOO })).name, 'foo');
    await server.admin('/_node/_local/_config/chttpd_auth/x_auth_username', { method: 'PUT', body: '"X-User"' });
    await server.admin('/_node/_local/_config/chttpd_auth/x_auth_roles', { method: 'PUT', body: '"X-Roles"' });
    await server.admin('/_node/_local/_config/chttpd_auth/x_auth_token', { method: 'PUT', body: '"X-Token"' });
    try {
      assert.deepEqual(await session({ 'X-User': 'foo', 'X-Roles': 'r', 'X-Token': SHA256_FOO }), { status: 200, name: 'foo', roles: ['r'], authenticated: 'proxy' });
      assert.equal((await session(proxyHeaders('foo', 'r', SHA256_FOO))).name, null, 'the default names no longer apply');
    } finally {
      for (const key of ['x_auth_username', 'x_auth_roles', 'x_auth_token']) {
        await server.admin(`/_node/_local/_config/chttpd_auth/${key}`, { method: 'DELETE' });
      }
    }
  });

  test('R-PROXY-8: the older [couch_httpd_auth] section is honoured', async () => {
    await server.admin('/_node/_local/_config/couch_httpd_auth/x_auth_username', { method: 'PUT', body: '"X-Legacy-User"' });
    try {
      assert.equal((await session({ 'X-Legacy-User': 'foo', 'X-Auth-CouchDB-Token': SHA256_FOO })).name, 'foo');
    } finally {
      await server.admin('/_node/_local/_config/couch_httpd_auth/x_auth_username', { method: 'DELETE' });
    }
  });

  test('proxied users need no _users document and can use databases by role', async () => {
    await server.admin('/staffonly', { method: 'PUT' });
    await server.admin('/staffonly/_security', { method: 'PUT', body: { members: { roles: ['staff'] } } });
    await server.admin('/staffonly/doc', { method: 'PUT', body: { v: 1 } });
    const member = await server.request('/staffonly/doc', { headers: proxyHeaders('nobody-in-users', 'staff', createHmac('sha256', 'the_secret').update('nobody-in-users').digest('hex')) });
    assert.equal(member.status, 200);
    assert.equal(member.headers['set-cookie'], undefined, 'proxy requests get no session cookie');
    const other = await server.request('/staffonly/doc', { headers: proxyHeaders('outsider', 'guest', createHmac('sha256', 'the_secret').update('outsider').digest('hex')) });
    assert.equal(other.status, 403);
  });

  test('a request that fails proxy authentication still reaches Basic', async () => {
    const res = await server.admin('/_session', { headers: proxyHeaders('foo', '', 'bad') });
    assert.equal(res.body.info.authenticated, 'default');
    assert.equal(res.body.userCtx.name, 'root');
  });

  async function withSecretOff(run: () => Promise<void>): Promise<void> {
    await server.admin('/_node/_local/_config/chttpd_auth/proxy_use_secret', { method: 'PUT', body: '"false"' });
    try {
      await run();
    } finally {
      await server.admin('/_node/_local/_config/chttpd_auth/proxy_use_secret', { method: 'PUT', body: '"true"' });
    }
  }
});

describe('proxy authentication: setting edges', () => {
  test('R-METH-4: proxy headers are ignored when the proxy handler is not in the chain', async () => {
    const server = await startServer();
    try {
      const res = await server.request('/_session', { headers: proxyHeaders('foo', '_admin') });
      assert.equal(res.body.userCtx.name, null);
      assert.equal((await server.request('/_all_dbs', { headers: proxyHeaders('foo', '_admin') })).status, 401);
    } finally {
      await server.close();
    }
  });

  test('proxy_use_secret without any secret yet: every proxy request steps aside (anonymous), _admin included, with or without a token', async () => {
    const server = await startServer({ ini: `[chttpd]\nauthentication_handlers = ${PROXY_FIRST}\n[chttpd_auth]\nproxy_use_secret = true\n` });
    try {
      for (const headers of [proxyHeaders('foo', 'r'), proxyHeaders('root', '_admin'), proxyHeaders('foo', '_admin', SHA256_FOO), proxyHeaders('foo', '', '')]) {
        const res = await server.request('/_session', { headers });
        assert.deepEqual({ status: res.status, userCtx: res.body.userCtx, authenticated: res.body.info.authenticated }, { status: 200, userCtx: { name: null, roles: [] }, authenticated: undefined });
      }
      const admin = await server.request('/_all_dbs', { headers: proxyHeaders('root', '_admin') });
      assert.deepEqual({ status: admin.status, body: admin.body }, { status: 401, body: { error: 'unauthorized', reason: 'You are not a server admin.' } });
      const basic = await server.admin('/_session', { headers: proxyHeaders('foo', '_admin') });
      assert.equal(basic.body.info.authenticated, 'default', 'the next handler still authenticates the request');
    } finally {
      await server.close();
    }
  });

  test('the missing secret is logged once, not per request, and again only after a secret came and went', async () => {
    const server = await startServer({ ini: `[chttpd]\nauthentication_handlers = ${PROXY_FIRST}\n[chttpd_auth]\nproxy_use_secret = true\n` });
    const reports = () => server.logs.filter((line) => line.includes('proxy authentication refused')).length;
    try {
      for (let i = 0; i < 5; i++) await server.request('/_session', { headers: proxyHeaders('foo', '_admin') });
      assert.equal(reports(), 1);
      assert.ok(!server.logs.some((line) => line.includes('_admin')), 'the log does not echo the claimed roles');
      // Straight through the config: an admin's Basic request would itself generate a secret (its cookie).
      await server.app.config.set('chttpd_auth', 'secret', 'the_secret');
      const signed = await server.request('/_session', { headers: proxyHeaders('foo', 'r', SHA256_FOO) });
      assert.equal(signed.body.info.authenticated, 'proxy', 'a secret makes signed requests work at once');
      await server.app.config.delete('chttpd_auth', 'secret');
      for (let i = 0; i < 2; i++) {
        assert.equal((await server.request('/_session', { headers: proxyHeaders('foo', 'r', SHA256_FOO) })).body.userCtx.name, null, 'the old token stops working');
      }
      assert.equal(reports(), 2);
    } finally {
      await server.close();
    }
  });

  test('the secret generated by the first /_session login is required from then on', async () => {
    const server = await startServer({ ini: `[chttpd]\nauthentication_handlers = ${PROXY_FIRST}\n[chttpd_auth]\nproxy_use_secret = true\niterations = 1000\n` });
    try {
      assert.equal((await server.request('/_session', { method: 'POST', body: { name: 'root', password: 'r00t-pass' } })).status, 200);
      const secret = server.app.config.authString('secret', '');
      assert.match(secret, /^[0-9a-f]{32}$/);
      assert.equal((await server.request('/_session', { headers: proxyHeaders('foo', 'r') })).body.userCtx.name, null, 'no token');
      const token = createHmac('sha256', secret).update('foo').digest('hex');
      assert.equal((await server.request('/_session', { headers: proxyHeaders('foo', 'r', token) })).body.userCtx.name, 'foo');
    } finally {
      await server.close();
    }
  });
});
