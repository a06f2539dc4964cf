import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { basicHeader, createUser, FAST_INI, NO_LOCKOUT_INI, userBody, userPath } from '../support/users-helpers.js';

/**
 * Security issue item 6: design documents' validate_doc_update functions are stored but not run
 * yet, so writes by non-admins to a database that has one are refused (fail closed), rather than
 * silently skipping the app's write rules.
 */
describe('validate_doc_update that cannot run yet fails closed', () => {
  let server: TestServer;
  const member = { headers: { Authorization: basicHeader('mia', 'mia-pass') } };
  const dbAdmin = { headers: { Authorization: basicHeader('dana', 'dana-pass') } };
  const guarded = { _id: '_design/rules', validate_doc_update: 'function (newDoc, oldDoc, userCtx) { throw({forbidden: "no"}); }' };

  before(async () => {
    server = await startServer({ ini: `${FAST_INI}${NO_LOCKOUT_INI}[couchdb]\nusers_db_security_editable = true\n` });
    await createUser(server, 'mia', 'mia-pass');
    await createUser(server, 'dana', 'dana-pass');
    for (const db of ['open', 'guarded']) {
      await server.admin(`/${db}`, { method: 'PUT' });
      await server.admin(`/${db}/_security`, { method: 'PUT', body: { admins: { names: ['dana'] }, members: { names: ['mia'] } } });
      await server.admin(`/${db}/existing`, { method: 'PUT', body: { v: 1 } });
    }
    assert.equal((await server.admin('/guarded/_design/rules', { method: 'PUT', body: guarded })).status, 201);
    // A design document without the function changes nothing.
    assert.equal((await server.admin('/open/_design/views', { method: 'PUT', body: { views: {} } })).status, 201);
  });
  after(async () => server.close());

  function assertRefused(res: { status: number; body: any }): void {
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.error, 'forbidden');
    assert.match(res.body.reason, /_design\/rules has a validate_doc_update function/);
  }

  test('a member may write to a database without validate_doc_update', async () => {
    assert.equal((await server.request('/open/m1', { method: 'PUT', body: { v: 1 }, ...member })).status, 201);
  });

  test('PUT, POST and DELETE by a member are refused with a reason naming the design document', async () => {
    assertRefused(await server.request('/guarded/m1', { method: 'PUT', body: { v: 1 }, ...member }));
    assertRefused(await server.request('/guarded', { method: 'POST', body: { v: 1 }, ...member }));
    const existing = await server.admin('/guarded/existing');
    assertRefused(await server.request(`/guarded/existing?rev=${existing.body._rev}`, { method: 'DELETE', ...member }));
    assert.equal((await server.admin('/guarded/m1')).status, 404, 'nothing was written');
    assert.equal((await server.admin('/guarded/existing')).body._rev, existing.body._rev, 'nothing was deleted');
    const info = await server.admin('/guarded');
    assert.equal(info.body.doc_count, 2, 'only the existing doc and the design doc');
  });

  test('_bulk_docs by a member answers each document with the refusal, _local documents still pass', async () => {
    const res = await server.request('/guarded/_bulk_docs', {
      method: 'POST',
      body: { docs: [{ _id: 'b1' }, { v: 2 }, { _id: '_local/checkpoint', seq: 1 }] },
      ...member,
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.length, 3);
    assert.equal(res.body[0].id, 'b1');
    assert.equal(res.body[0].error, 'forbidden');
    assert.equal(res.body[1].error, 'forbidden');
    assert.equal(res.body[2].ok, true);
    assert.equal((await server.admin('/guarded/b1')).status, 404);
  });

  test('replicated writes (new_edits=false) by a member are refused too', async () => {
    const res = await server.request('/guarded/_bulk_docs', {
      method: 'POST',
      body: { new_edits: false, docs: [{ _id: 'r1', _rev: '1-0123456789abcdef0123456789abcdef' }] },
      ...member,
    });
    assert.equal(res.status, 201);
    assert.equal(res.body[0].error, 'forbidden');
    assert.equal((await server.admin('/guarded/r1')).status, 404);
  });

  test('database admins and server admins still write', async () => {
    assert.equal((await server.request('/guarded/d1', { method: 'PUT', body: { v: 1 }, ...dbAdmin })).status, 201);
    assert.equal((await server.admin('/guarded/s1', { method: 'PUT', body: { v: 1 } })).status, 201);
  });

  test('deleting the design document reopens the database to members', async () => {
    const rules = await server.admin('/open/_design/rules', { method: 'PUT', body: guarded });
    assertRefused(await server.request('/open/m2', { method: 'PUT', body: { v: 1 }, ...member }));
    await server.admin(`/open/_design/rules?rev=${rules.body.rev}`, { method: 'DELETE' });
    assert.equal((await server.request('/open/m2', { method: 'PUT', body: { v: 1 }, ...member })).status, 201);
  });

  test('a custom validate_doc_update in _users refuses sign-up and owner updates until it can run', async () => {
    const opened = await server.admin('/_users/_security', { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: [], roles: [] } } });
    assert.equal(opened.status, 200);
    const signUp = await server.request(userPath('newbie'), { method: 'PUT', body: userBody('newbie', 'pw') });
    assert.equal(signUp.status, 201, 'open sign-up works while only CouchDB\'s own rules apply');
    const custom = await server.admin('/_users/_design/extra', { method: 'PUT', body: guarded });
    assert.equal(custom.status, 201);
    const refused = await server.request(userPath('other'), { method: 'PUT', body: userBody('other', 'pw') });
    assert.equal(refused.status, 403);
    assert.match(refused.body.reason, /_design\/extra has a validate_doc_update function/);
    await server.admin(`/_users/_design/extra?rev=${custom.body.rev}`, { method: 'DELETE' });
    // `_design/_auth` is CouchDB's own users validation, which Divan runs natively: no refusal.
    const auth = await server.admin('/_users/_design/_auth', { method: 'PUT', body: { ...guarded, _id: '_design/_auth' } });
    assert.equal(auth.status, 201);
    assert.equal((await server.request(userPath('third'), { method: 'PUT', body: userBody('third', 'pw') })).status, 201);
  });
});
