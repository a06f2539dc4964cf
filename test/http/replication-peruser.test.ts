// Per-user databases ([couch_peruser]): created with the user, secured for that user only, deleted
// or unsecured with the user; for JWT and proxy users only with on_external_user = true.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { perUserDatabaseName } from '../../src/databases/per-user.js';
import { bearer, externalAuthIni } from '../support/external-auth.js';
import { startServer, type TestServer } from '../support/server.js';
import { createUser, FAST_INI, NO_LOCKOUT_INI, setConfig, userPath } from '../support/users-helpers.js';
import { rev, replicated } from './replication-support.js';

const hex = (name: string): string => Buffer.from(name, 'utf8').toString('hex');

async function deleteUser(server: TestServer, name: string): Promise<void> {
  const current = await server.admin(userPath(name));
  const res = await server.admin(userPath(name, `?rev=${current.body._rev}`), { method: 'DELETE' });
  assert.equal(res.status, 200, res.text);
}

describe('per-user databases', () => {
  const SECRET = Buffer.from('peruser-test-hmac-secret-0123456789');
  let server: TestServer;
  before(async () => {
    server = await startServer({
      ini: `${FAST_INI}${NO_LOCKOUT_INI}[couch_peruser]\nenable = true\n${externalAuthIni(SECRET)}`,
    });
  });
  after(async () => server.close());

  test('the database name is the prefix and the hex of the UTF-8 name, as CouchDB writes it', () => {
    assert.equal(perUserDatabaseName('userdb-', 'bob'), 'userdb-626f62');
    assert.equal(perUserDatabaseName('userdb-', 'Zoë'), 'userdb-5a6fc3ab');
    assert.equal(perUserDatabaseName('p-', '\u0001a'), 'p-161', 'bytes below 0x10 have one digit (integer_to_list(X, 16))');
  });

  test('creating a user creates userdb-<hex> with that user as admin and member, before the write is answered', async () => {
    await createUser(server, 'anna', 'anna-pass');
    const db = `userdb-${hex('anna')}`;
    const security = await server.admin(`/${db}/_security`);
    assert.equal(security.status, 200, `no ${db} right after the user was created: ${security.text}`);
    assert.deepEqual(security.body, {
      members: { roles: ['_admin'], names: ['anna'] },
      admins: { roles: ['_admin'], names: ['anna'] },
      divan_peruser_owner: 'anna',
    });
  });

  test('a user can use only their own database', async () => {
    await createUser(server, 'ben', 'ben-pass');
    await createUser(server, 'cleo', 'cleo-pass');
    const ben = `userdb-${hex('ben')}`;
    const cleo = `userdb-${hex('cleo')}`;
    const write = await server.request(`/${ben}/note`, { method: 'PUT', auth: ['ben', 'ben-pass'], body: { mine: true } });
    assert.equal(write.status, 201);
    const design = await server.request(`/${ben}/_design/app`, { method: 'PUT', auth: ['ben', 'ben-pass'], body: {} });
    assert.equal(design.status, 201, 'the owner is a database admin');
    for (const path of [`/${cleo}`, `/${cleo}/_changes`, `/${cleo}/_all_docs`]) {
      const res = await server.request(path, { auth: ['ben', 'ben-pass'] });
      assert.equal(res.status, 403, `${path}: ${res.text}`);
    }
    const push = await server.request(`/${cleo}/_bulk_docs`, { method: 'POST', auth: ['ben', 'ben-pass'], body: { new_edits: false, docs: [replicated('x', [rev(1, 'a')])] } });
    assert.equal(push.status, 403);
    assert.equal((await server.request(`/${ben}`, { auth: ['cleo', 'cleo-pass'] })).status, 403);
    assert.equal((await server.request(`/${ben}`)).status, 401);
  });

  test('deleting the user takes it out of _security (delete_dbs = false), or deletes the database (true)', async () => {
    await createUser(server, 'dora', 'dora-pass');
    const dora = `userdb-${hex('dora')}`;
    await deleteUser(server, 'dora');
    const security = await server.admin(`/${dora}/_security`);
    assert.deepEqual(security.body, { members: { roles: ['_admin'], names: [] }, admins: { roles: ['_admin'], names: [] }, divan_peruser_owner: 'dora' });
    await setConfig(server, 'couch_peruser', 'delete_dbs', 'true');
    try {
      await createUser(server, 'eli', 'eli-pass');
      const eli = `userdb-${hex('eli')}`;
      assert.equal((await server.admin(`/${eli}`)).status, 200);
      await deleteUser(server, 'eli');
      assert.equal((await server.admin(`/${eli}`)).status, 404);
    } finally {
      await setConfig(server, 'couch_peruser', 'delete_dbs', 'false');
    }
  });

  test('database_prefix is honoured; an illegal prefix turns the feature off', async () => {
    await setConfig(server, 'couch_peruser', 'database_prefix', 'home-');
    try {
      await createUser(server, 'fay', 'fay-pass');
      assert.equal((await server.admin(`/home-${hex('fay')}`)).status, 200);
      assert.equal((await server.admin(`/userdb-${hex('fay')}`)).status, 404);
      await setConfig(server, 'couch_peruser', 'database_prefix', 'Bad-');
      await createUser(server, 'gus', 'gus-pass');
      assert.deepEqual((await server.admin('/_all_dbs')).body.filter((name: string) => name.endsWith(hex('gus'))), []);
    } finally {
      await setConfig(server, 'couch_peruser', 'database_prefix', 'userdb-');
    }
  });

  test('a user replicated into _users gets a database too', async () => {
    const doc = replicated('org.couchdb.user:hal', [rev(1, 'b')], { name: 'hal', type: 'user', roles: [], password: 'hal-pass' });
    const res = await server.admin('/_users/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [doc] } });
    assert.deepEqual([res.status, res.body], [201, []]);
    assert.deepEqual((await server.admin(`/userdb-${hex('hal')}/_security`)).body.admins.names, ['hal']);
  });

  test('JWT and proxy users get a database only with on_external_user = true', async () => {
    const session = await server.request('/_session', { headers: await bearer(SECRET, 'ivy') });
    assert.equal(session.body.userCtx.name, 'ivy');
    await server.request('/_session', { headers: { 'X-Auth-CouchDB-UserName': 'jon' } });
    assert.equal((await server.admin(`/userdb-${hex('ivy')}`)).status, 404, 'off by default: CouchDB follows _users only');
    assert.equal((await server.admin(`/userdb-${hex('jon')}`)).status, 404);
    await setConfig(server, 'couch_peruser', 'on_external_user', 'true');
    try {
      const ivyDb = `userdb-${hex('ivy')}`;
      const first = await server.request(`/${ivyDb}/hello`, { method: 'PUT', headers: await bearer(SECRET, 'ivy'), body: { from: 'jwt' } });
      assert.equal(first.status, 201, `the first request of a JWT user finds its database: ${first.text}`);
      assert.deepEqual((await server.admin(`/${ivyDb}/_security`)).body.members.names, ['ivy']);
      const jonDb = `userdb-${hex('jon')}`;
      const proxied = await server.request(`/${jonDb}`, { headers: { 'X-Auth-CouchDB-UserName': 'jon' } });
      assert.equal(proxied.status, 200, proxied.text);
      const other = await server.request(`/${ivyDb}`, { headers: { 'X-Auth-CouchDB-UserName': 'jon' } });
      assert.equal(other.status, 403, 'each external user gets only their own database');
    } finally {
      await setConfig(server, 'couch_peruser', 'on_external_user', 'false');
    }
  });
});

describe('per-user databases switched off (the default)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI });
  });
  after(async () => server.close());

  test('creating a user creates no database', async () => {
    await createUser(server, 'kim', 'kim-pass');
    assert.deepEqual((await server.admin('/_all_dbs')).body, ['_replicator', '_users']);
  });
});
