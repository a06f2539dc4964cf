import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { basicHeader, createUser, FAST_INI, NO_LOCKOUT_INI, userBody, userPath } from '../support/users-helpers.js';

/**
 * Design documents' validate_doc_update functions run on every write path of normal documents, with
 * CouchDB's arguments and error mapping (this replaced the fail-closed refusal of the security issue).
 */
describe('validate_doc_update runs on every write', () => {
  let server: TestServer;
  const member = { headers: { Authorization: basicHeader('mia', 'mia-pass') } };
  const dbAdmin = { headers: { Authorization: basicHeader('dana', 'dana-pass') } };
  const rules = {
    _id: '_design/rules',
    validate_doc_update: `function (newDoc, oldDoc, userCtx, secObj) {
      if (newDoc._deleted) { if (oldDoc && oldDoc.keep) throw({forbidden: 'keep ' + oldDoc._id}); return; }
      if (newDoc.echo) throw({forbidden: JSON.stringify({newDoc: newDoc, oldDoc: oldDoc, userCtx: userCtx, secObj: secObj})});
      if (newDoc.anonymous_only && userCtx.name) throw({unauthorized: 'only anonymous'});
      if (newDoc.bug) null.crash;
      if (newDoc.other) throw({odd: 'other'});
      if (!newDoc.type) throw({forbidden: 'type required'});
    }`,
  };
  const second = { _id: '_design/second', validate_doc_update: 'function (newDoc) { if (newDoc.type === "banned") throw({forbidden: "banned by second"}); }' };
  const security = { admins: { names: ['dana'], roles: [] }, members: { names: ['mia'], roles: [] } };

  before(async () => {
    server = await startServer({ ini: `${FAST_INI}${NO_LOCKOUT_INI}[couchdb]\nusers_db_security_editable = true\n` });
    await createUser(server, 'mia', 'mia-pass');
    await createUser(server, 'dana', 'dana-pass');
    await server.admin('/app', { method: 'PUT' });
    await server.admin('/app/_security', { method: 'PUT', body: security });
    await server.admin('/app/existing', { method: 'PUT', body: { type: 't', keep: true } });
    assert.equal((await server.admin('/app/_design/rules', { method: 'PUT', body: rules })).status, 201);
    assert.equal((await server.admin('/app/_design/second', { method: 'PUT', body: second })).status, 201);
  });
  after(async () => server.close());

  test('PUT, POST: a passing document is stored, a refused one answers 403 with the message', async () => {
    assert.equal((await server.request('/app/m1', { method: 'PUT', body: { type: 't' }, ...member })).status, 201);
    const refused = await server.request('/app/m2', { method: 'PUT', body: { v: 1 }, ...member });
    assert.deepEqual([refused.status, refused.body], [403, { error: 'forbidden', reason: 'type required' }]);
    const posted = await server.request('/app', { method: 'POST', body: { v: 1 }, ...member });
    assert.deepEqual([posted.status, posted.body], [403, { error: 'forbidden', reason: 'type required' }]);
    assert.equal((await server.admin('/app/m2')).status, 404);
  });

  test('the function gets newDoc, oldDoc, userCtx (db, name, roles) and secObj as CouchDB passes them', async () => {
    const created = await server.request('/app/e1', { method: 'PUT', body: { echo: true }, ...member });
    const args = JSON.parse(created.body.reason);
    assert.deepEqual(args, { newDoc: { _id: 'e1', echo: true }, oldDoc: null, userCtx: { db: 'app', name: 'mia', roles: [] }, secObj: security });
    const stored = await server.admin('/app/m1');
    const updated = await server.request('/app/m1', { method: 'PUT', body: { _rev: stored.body._rev, echo: true }, ...member });
    const update = JSON.parse(updated.body.reason);
    assert.deepEqual(update.newDoc, { _id: 'm1', _rev: stored.body._rev, echo: true });
    assert.deepEqual(update.oldDoc, { _id: 'm1', _rev: stored.body._rev, type: 't' });
  });

  test('unauthorized is 401, an Error in the function is 500, another thrown object 500 unknown_error', async () => {
    const unauthorized = await server.request('/app/u1', { method: 'PUT', body: { anonymous_only: true, type: 't' }, ...member });
    assert.deepEqual([unauthorized.status, unauthorized.body], [401, { error: 'unauthorized', reason: 'only anonymous' }]);
    const bug = await server.request('/app/u2', { method: 'PUT', body: { bug: true }, ...member });
    assert.equal(bug.status, 500);
    assert.equal(bug.body.error, 'TypeError');
    const other = await server.request('/app/u3', { method: 'PUT', body: { other: true }, ...member });
    assert.deepEqual([other.status, other.body], [500, { error: 'unknown_error', reason: 'other' }]);
  });

  test('every design document\'s function runs in turn', async () => {
    const res = await server.request('/app/b0', { method: 'PUT', body: { type: 'banned' }, ...member });
    assert.deepEqual([res.status, res.body], [403, { error: 'forbidden', reason: 'banned by second' }]);
  });

  test('DELETE gets _deleted and the stored document as oldDoc', async () => {
    const existing = await server.admin('/app/existing');
    const res = await server.request(`/app/existing?rev=${existing.body._rev}`, { method: 'DELETE', ...member });
    assert.deepEqual([res.status, res.body], [403, { error: 'forbidden', reason: 'keep existing' }]);
    const m1 = await server.admin('/app/m1');
    assert.equal((await server.request(`/app/m1?rev=${m1.body._rev}`, { method: 'DELETE', ...member })).status, 200);
  });

  test('_bulk_docs answers each refused document in its row and stores the others; _local passes', async () => {
    const res = await server.request('/app/_bulk_docs', {
      method: 'POST',
      body: { docs: [{ _id: 'b1', type: 't' }, { _id: 'b2' }, { _id: '_local/checkpoint', seq: 1 }, { _id: 'b3', type: 'banned' }] },
      ...member,
    });
    assert.equal(res.status, 201);
    assert.equal(res.body[0].ok, true);
    assert.deepEqual(res.body[1], { id: 'b2', error: 'forbidden', reason: 'type required' });
    assert.equal(res.body[2].ok, true);
    assert.deepEqual(res.body[3], { id: 'b3', error: 'forbidden', reason: 'banned by second' });
    assert.equal((await server.admin('/app/b1')).status, 200);
    assert.equal((await server.admin('/app/b2')).status, 404);
  });

  test('replicated writes (new_edits=false) are validated, with _revisions in newDoc', async () => {
    const res = await server.request('/app/_bulk_docs', {
      method: 'POST',
      body: { new_edits: false, docs: [{ _id: 'r1', _rev: '1-0123456789abcdef0123456789abcdef' }, { _id: 'r2', _rev: '1-0123456789abcdef0123456789abcdef', type: 't' }] },
      ...member,
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, [{ id: 'r1', error: 'forbidden', reason: 'type required' }]);
    assert.equal((await server.admin('/app/r1')).status, 404);
    assert.equal((await server.admin('/app/r2')).status, 200);
    const echo = await server.request('/app/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [{ _id: 'r3', _rev: '2-abc', _revisions: { start: 2, ids: ['abc', 'def'] }, echo: true }] }, ...member });
    assert.deepEqual(JSON.parse(echo.body[0].reason).newDoc._revisions, { start: 2, ids: ['abc', 'def'] });
  });

  test('database admins and server admins are validated too (as CouchDB); design documents are not', async () => {
    assert.equal((await server.request('/app/d1', { method: 'PUT', body: { v: 1 }, ...dbAdmin })).status, 403);
    assert.equal((await server.admin('/app/s1', { method: 'PUT', body: { v: 1 } })).status, 403);
    assert.equal((await server.admin('/app/_design/plain', { method: 'PUT', body: { v: 1 } })).status, 201);
  });

  test('a design document whose functions do not compile is refused with compilation_error', async () => {
    const res = await server.admin('/app/_design/broken', { method: 'PUT', body: { validate_doc_update: 'function (newDoc {' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'compilation_error');
    assert.match(res.body.reason, /^Compilation of the validate_doc_update function failed: SyntaxError/);
    const view = await server.admin('/app/_bulk_docs', { method: 'POST', body: { docs: [{ _id: '_design/v', views: { all: { map: 'function (doc) { emit(' } } }] } });
    assert.equal(view.body[0].error, 'compilation_error');
    assert.match(view.body[0].reason, /^Compilation of the map function in the 'all' view failed: /);
  });

  test('a changed or deleted design document takes effect at once', async () => {
    await server.admin('/open', { method: 'PUT' });
    await server.admin('/open/_security', { method: 'PUT', body: security });
    assert.equal((await server.request('/open/o1', { method: 'PUT', body: { v: 1 }, ...member })).status, 201);
    const put = await server.admin('/open/_design/rules', { method: 'PUT', body: rules });
    assert.equal((await server.request('/open/o2', { method: 'PUT', body: { v: 1 }, ...member })).status, 403);
    const loose = { ...rules, _rev: put.body.rev, validate_doc_update: 'function (newDoc) { if (newDoc.v === 2) throw({forbidden: "no twos"}); }' };
    const changed = await server.admin('/open/_design/rules', { method: 'PUT', body: loose });
    assert.equal((await server.request('/open/o2', { method: 'PUT', body: { v: 1 }, ...member })).status, 201);
    assert.equal((await server.request('/open/o3', { method: 'PUT', body: { v: 2 }, ...member })).status, 403);
    await server.admin(`/open/_design/rules?rev=${changed.body.rev}`, { method: 'DELETE' });
    assert.equal((await server.request('/open/o3', { method: 'PUT', body: { v: 2 }, ...member })).status, 201);
  });

  test("a custom validate_doc_update in _users runs; CouchDB's own _design/_auth is the native one, an edited one runs", async () => {
    const opened = await server.admin('/_users/_security', { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: [], roles: [] } } });
    assert.equal(opened.status, 200);
    assert.equal((await server.request(userPath('newbie'), { method: 'PUT', body: userBody('newbie', 'pw') })).status, 201);
    const custom = await server.admin('/_users/_design/extra', { method: 'PUT', body: { validate_doc_update: 'function (newDoc) { if (newDoc.name === "other") throw({forbidden: "no others"}); }' } });
    assert.equal(custom.status, 201);
    const refused = await server.request(userPath('other'), { method: 'PUT', body: userBody('other', 'pw') });
    assert.deepEqual([refused.status, refused.body], [403, { error: 'forbidden', reason: 'no others' }]);
    await server.admin(`/_users/_design/extra?rev=${custom.body.rev}`, { method: 'DELETE' });
    const own = await server.admin('/_users/_design/_auth');
    assert.equal(own.status, 200, 'the users database has CouchDB\'s _design/_auth');
    assert.equal((await server.request(userPath('third'), { method: 'PUT', body: userBody('third', 'pw') })).status, 201);
    const auth = await server.admin('/_users/_design/_auth', { method: 'PUT', body: { _id: '_design/_auth', _rev: own.body._rev, validate_doc_update: 'function () { throw({forbidden: "never"}); }' } });
    assert.equal(auth.status, 201);
    const refused2 = await server.request(userPath('fourth'), { method: 'PUT', body: userBody('fourth', 'pw') });
    assert.deepEqual([refused2.status, refused2.body], [403, { error: 'forbidden', reason: 'never' }]);
  });
});
