// A member (authenticated, not a database admin) who writes a design document or an attachment of
// one gets the same answer either way: CouchDB 3.5's 401 `You are not a db or server admin.`
// (docs/errors.md, "An authenticated caller without the right").
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { createUser, FAST_INI, NO_LOCKOUT_INI } from '../support/users-helpers.js';

const MEMBER: [string, string] = ['mia', 'mia-pass'];
const NOT_DB_ADMIN = { error: 'unauthorized', reason: 'You are not a db or server admin.' };

describe("a member's writes to design documents", () => {
  let server: TestServer;
  let rev: string;
  before(async () => {
    server = await startServer({ ini: `${FAST_INI}${NO_LOCKOUT_INI}` });
    await createUser(server, ...MEMBER);
    assert.equal((await server.admin('/app', { method: 'PUT' })).status, 201);
    const security = { admins: { names: [], roles: [] }, members: { names: [MEMBER[0]], roles: [] } };
    assert.equal((await server.admin('/app/_security', { method: 'PUT', body: security })).status, 200);
    const created = await server.admin('/app/_design/ui', { method: 'PUT', body: { views: {} } });
    assert.equal(created.status, 201);
    rev = created.body.rev;
  });
  after(async () => server.close());

  test('the design document itself: 401 not a db or server admin', async () => {
    const res = await server.request('/app/_design/ui', { method: 'PUT', auth: MEMBER, body: { _rev: rev, views: { v: { map: 'function (doc) { emit(doc._id); }' } } } });
    assert.deepEqual([res.status, res.body], [401, NOT_DB_ADMIN]);
  });

  test('an attachment of it: the same 401, with no challenge that would make a browser ask again', async () => {
    const res = await server.request(`/app/_design/ui/index.html?rev=${rev}`, { method: 'PUT', auth: MEMBER, headers: { 'Content-Type': 'text/html' }, body: '<p>hi</p>' });
    assert.deepEqual([res.status, res.body], [401, NOT_DB_ADMIN]);
    assert.equal(res.headers['www-authenticate'], undefined);
    assert.equal((await server.admin('/app/_design/ui')).body._rev, rev, 'nothing was written');
    const added = await server.admin(`/app/_design/ui/style.css?rev=${rev}`, { method: 'PUT', headers: { 'Content-Type': 'text/css' }, body: 'p {}' });
    assert.equal(added.status, 201);
    const removed = await server.request(`/app/_design/ui/style.css?rev=${added.body.rev}`, { method: 'DELETE', auth: MEMBER });
    assert.deepEqual([removed.status, removed.body], [401, NOT_DB_ADMIN]);
    assert.equal(removed.headers['www-authenticate'], undefined);
    assert.equal((await server.admin('/app/_design/ui')).body._rev, added.body.rev, 'nothing was removed');
  });

  test('an ordinary document and its attachment stay open to the member', async () => {
    const doc = await server.request('/app/note', { method: 'PUT', auth: MEMBER, body: { a: 1 } });
    assert.equal(doc.status, 201);
    const att = await server.request(`/app/note/a.txt?rev=${doc.body.rev}`, { method: 'PUT', auth: MEMBER, headers: { 'Content-Type': 'text/plain' }, body: 'x' });
    assert.equal(att.status, 201, att.text);
  });
});
