import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN, startServer, type TestServer } from '../support/server.js';
import { seqNumber } from '../support/sequences.js';

describe('databases and _security', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => server.close());

  test('PUT /{db} by a server admin answers 201 {ok:true} with Location', async () => {
    const res = await server.admin('/created', { method: 'PUT' });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { ok: true });
    assert.equal(res.headers['location'], `${server.url}/created`);
  });

  test('PUT /{db} twice answers 412 file_exists', async () => {
    await server.admin('/twice', { method: 'PUT' });
    const res = await server.admin('/twice', { method: 'PUT' });
    assert.equal(res.status, 412);
    assert.deepEqual(res.body, { error: 'file_exists', reason: 'The database could not be created, the file already exists.' });
  });

  test('PUT /{db} by anonymous is 401 You are not a server admin.', async () => {
    const res = await server.request('/anon', { method: 'PUT' });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized', reason: 'You are not a server admin.' });
  });

  for (const name of ['Upper', '1digit', '_private', 'sp ace', 'a'.repeat(239)]) {
    test(`PUT /${name.slice(0, 12)} is 400 illegal_database_name`, async () => {
      const res = await server.admin(`/${encodeURIComponent(name)}`, { method: 'PUT' });
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'illegal_database_name');
      assert.match(res.body.reason, /^Name: '.*'\. Only lowercase characters \(a-z\), digits \(0-9\), and any of the characters _, \$, \(, \), \+, -, and \/ are allowed\. Must begin with a letter\.$/);
    });
  }

  test('names with the allowed specials and an encoded slash are valid', async () => {
    const res = await server.admin(`/${encodeURIComponent('a-b_c$d(e)+f/g')}`, { method: 'PUT' });
    assert.equal(res.status, 201);
    const info = await server.admin(`/${encodeURIComponent('a-b_c$d(e)+f/g')}`);
    assert.equal(info.body.db_name, 'a-b_c$d(e)+f/g');
  });

  test('GET /{db} gives CouchDB-shaped info; HEAD gives no body', async () => {
    await server.admin('/infodb', { method: 'PUT' });
    await server.admin('/infodb/one', { method: 'PUT', body: { a: 1 } });
    const res = await server.admin('/infodb');
    assert.equal(res.status, 200);
    assert.equal(res.body.db_name, 'infodb');
    assert.equal(res.body.doc_count, 1);
    assert.equal(res.body.doc_del_count, 0);
    assert.equal(typeof res.body.update_seq, 'string');
    assert.equal(typeof res.body.instance_start_time, 'string');
    assert.deepEqual(Object.keys(res.body.sizes), ['file', 'external', 'active']);
    const head = await server.admin('/infodb', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });

  test('GET /{missing} is 404 Database does not exist.', async () => {
    const res = await server.admin('/nosuchdb');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'not_found', reason: 'Database does not exist.' });
  });

  test('DELETE /{db} by an admin answers 200; again 404; ?rev= is refused', async () => {
    await server.admin('/doomed', { method: 'PUT' });
    const withRev = await server.admin('/doomed?rev=1-abc', { method: 'DELETE' });
    assert.equal(withRev.status, 400);
    const res = await server.admin('/doomed', { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ok: true });
    assert.equal((await server.admin('/doomed', { method: 'DELETE' })).status, 404);
  });

  test('DELETE /{db} by anonymous is 401', async () => {
    await server.admin('/kept', { method: 'PUT' });
    const res = await server.request('/kept', { method: 'DELETE' });
    assert.equal(res.status, 401);
    assert.equal((await server.admin('/kept')).status, 200);
  });

  test('a deleted and recreated database starts empty with a fresh sequence', async () => {
    await server.admin('/phoenix', { method: 'PUT' });
    await server.admin('/phoenix/doc', { method: 'PUT', body: {} });
    await server.admin('/phoenix', { method: 'DELETE' });
    await server.admin('/phoenix', { method: 'PUT' });
    const res = await server.admin('/phoenix');
    assert.equal(res.body.doc_count, 0);
    assert.equal(seqNumber(res.body.update_seq), 0);
    assert.equal((await server.admin('/phoenix/doc')).status, 404);
  });

  test('new databases get admin_only _security (CouchDB 3 default_security)', async () => {
    await server.admin('/secure', { method: 'PUT' });
    const res = await server.admin('/secure/_security');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { members: { roles: ['_admin'] }, admins: { roles: ['_admin'] } });
  });

  test('anonymous non-member gets 401 You are not authorized to access this db.', async () => {
    await server.admin('/private', { method: 'PUT' });
    const res = await server.request('/private');
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized', reason: 'You are not authorized to access this db.' });
  });

  test('PUT /_security by the db admin replaces it; members then read documents', async () => {
    await server.admin('/opened', { method: 'PUT' });
    const put = await server.admin('/opened/_security', { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: [], roles: [] } } });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body, { ok: true });
    await server.admin('/opened/pub', { method: 'PUT', body: { hello: 'world' } });
    const anon = await server.request('/opened/pub');
    assert.equal(anon.status, 200, 'empty members means a public database');
    assert.equal(anon.body.hello, 'world');
    const anonSecurity = await server.request('/opened/_security');
    assert.equal(anonSecurity.status, 200);
  });

  test('anonymous cannot PUT _security of a public database: 401 You are not a db or server admin.', async () => {
    await server.admin('/public2', { method: 'PUT' });
    await server.admin('/public2/_security', { method: 'PUT', body: {} });
    const res = await server.request('/public2/_security', { method: 'PUT', body: { members: { names: ['x'] } } });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized', reason: 'You are not a db or server admin.' });
  });

  for (const [title, body, reason] of [
    ['an array', [1, 2], 'Security object must be a JSON object.'],
    ['names not a list', { members: { names: 'bob' } }, 'names must be a JSON list of strings'],
    ['roles with a number', { admins: { roles: [1] } }, 'roles must be a JSON list of strings'],
    ['members not an object', { members: 5 }, 'admins or members must be a JSON list of strings'],
  ] as const) {
    test(`PUT /_security with ${title} is 400 bad_request`, async () => {
      await server.admin('/secval', { method: 'PUT' });
      const res = await server.admin('/secval/_security', { method: 'PUT', body });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { error: 'bad_request', reason });
    });
  }

  test('PUT /_users/_security is 403 unless users_db_security_editable', async () => {
    const res = await server.admin('/_users/_security', { method: 'PUT', body: {} });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, { error: 'forbidden', reason: "You can't edit the security object of the user database." });
  });

  test('members by role: a role listed in members grants access', async () => {
    // The admin's roles are ["_admin"]; list a database admin by role and check the rule via admins.
    await server.admin('/byrole', { method: 'PUT' });
    const res = await server.admin('/byrole/_security', { method: 'PUT', body: { members: { roles: ['_admin'] } } });
    assert.equal(res.status, 200);
    assert.equal((await server.request('/byrole', { auth: ADMIN })).status, 200);
  });
});
