// Per-document access with identities that no `_users` document holds: a JWT's `sub` and roles
// claim, a proxy's name and roles headers. `_access` compares the name and roles whatever
// authentication gave them.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { before, test } from 'node:test';
import { SignJWT } from 'jose';
import { ACCESS_DB, as, seedAccessDb } from '../support/access-helpers.js';
import { describeOnEachBackend } from '../support/backend-servers.js';
import { externalAuthIni } from '../support/external-auth.js';
import type { HttpOptions, HttpResponse } from '../support/http.js';
import type { TestServer } from '../support/server.js';
import { FAST_INI, NO_LOCKOUT_INI } from '../support/users-helpers.js';

const JWT_SECRET = Buffer.from('access-jwt-secret-of-at-least-32-bytes');
const PROXY_SECRET = 'access-proxy-secret';

async function jwt(sub: string, roles: string[]): Promise<Record<string, string>> {
  const token = await new SignJWT({ sub, '_couchdb.roles': roles, exp: Math.floor(Date.now() / 1000) + 300 }).setProtectedHeader({ alg: 'HS256' }).sign(JWT_SECRET);
  return { Authorization: `Bearer ${token}` };
}

function proxy(name: string, roles: string): Record<string, string> {
  const token = createHmac('sha256', PROXY_SECRET).update(name).digest('hex');
  return { 'X-Auth-CouchDB-UserName': name, 'X-Auth-CouchDB-Roles': roles, 'X-Auth-CouchDB-Token': token };
}

function with_(server: TestServer, headers: Record<string, string>, path: string, options: HttpOptions = {}): Promise<HttpResponse> {
  return server.request(`/${ACCESS_DB}${path}`, { ...options, headers: { ...options.headers, ...headers } });
}

const ids = (rows: { id: string }[]): string[] => rows.map((row) => row.id).sort();

describeOnEachBackend(
  'per-document access: JWT and proxy callers',
  (server) => {
    before(async () => {
      await seedAccessDb(server());
      for (const [user, id, access] of [['alice', 'a1', ['alice']], ['alice', 't1', ['team']], ['bob', 'b1', ['bob']]] as const) {
        const res = await as(server(), user, `/${id}`, { method: 'PUT', body: { _access: access } });
        assert.equal(res.status, 201, res.text);
      }
    });

    test('a JWT caller writes and reads their own documents and those of the roles in the token', async () => {
      const jane = await jwt('jane', ['todo', 'team']);
      assert.equal((await with_(server(), jane, '/j1', { method: 'PUT', body: { _access: ['jane'] } })).status, 201);
      assert.equal((await with_(server(), jane, '/j-bob', { method: 'PUT', body: { _access: ['bob'] } })).status, 403);
      const listed = await with_(server(), jane, '/_all_docs');
      assert.deepEqual([ids(listed.body.rows), listed.body.total_rows], [['j1', 't1'], 2], listed.text);
      const changes = await with_(server(), jane, '/_changes');
      assert.deepEqual(ids(changes.body.results), ['j1', 't1'], changes.text);
      assert.equal((await with_(server(), jane, '/a1')).status, 404);
      // The same name without the role: the team's document is gone, hers stays.
      const plain = await jwt('jane', ['todo']);
      assert.deepEqual(ids((await with_(server(), plain, '/_all_docs')).body.rows), ['j1']);
      assert.equal((await with_(server(), plain, '/t1')).status, 404);
      assert.deepEqual(ids((await as(server(), 'bob', '/_all_docs')).body.rows), ['b1']);
    });

    test('a proxy caller writes and reads their own documents and those of the roles in the header', async () => {
      const pat = proxy('pat', 'todo,team');
      assert.equal((await with_(server(), pat, '/p1', { method: 'PUT', body: { _access: ['pat'] } })).status, 201);
      const listed = await with_(server(), pat, '/_all_docs');
      assert.deepEqual(ids(listed.body.rows), ['p1', 't1'], listed.text);
      const got = await with_(server(), pat, '/_bulk_get', { method: 'POST', body: { docs: [{ id: 'p1' }, { id: 'a1' }, { id: 't1' }] } });
      const readable = (got.body.results as { id: string; docs: { ok?: unknown }[] }[]).filter((result) => result.docs[0]!.ok !== undefined).map((result) => result.id);
      assert.deepEqual(readable, ['p1', 't1']);
      const put = await with_(server(), pat, '/_local/checkpoint', { method: 'PUT', body: { seq: 7 } });
      assert.equal(put.status, 201, put.text);
      assert.equal((await as(server(), 'alice', '/_local/checkpoint')).status, 404);
      assert.deepEqual(ids((await as(server(), 'alice', '/_all_docs')).body.rows), ['a1', 't1']);
    });

    test('a JWT or proxy caller without a member role is refused the database', async () => {
      assert.equal((await with_(server(), await jwt('mallory', ['team']), '/_all_docs')).status, 403);
      assert.equal((await with_(server(), proxy('mallory', 'team'), '/_changes')).status, 403);
    });
  },
  `${FAST_INI}${NO_LOCKOUT_INI}${externalAuthIni(JWT_SECRET)}[chttpd_auth]\nsecret = ${PROXY_SECRET}\nproxy_use_secret = true\n`,
);
