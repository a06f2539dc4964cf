// The _replicator read rule tells Mango what it shows as stored: admins query with every index; other
// users cannot list _replicator at all, and for them the endpoints are not shown as stored. Issue 32 item 9.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { createUser, FAST_INI } from '../support/users-helpers.js';

describe('_find in _replicator uses indexes by what the caller sees (issue 32 item 9)', () => {
  let server: TestServer;
  const BOB: [string, string] = ['bob', 'bob-pass'];

  before(async () => {
    server = await startServer({ ini: `${FAST_INI}[replicator]\nmax_jobs_per_user = 100\n` });
    await createUser(server, BOB[0], BOB[1]);
    await server.admin('/_replicator', { method: 'PUT' });
    for (const fields of [['note'], ['source']]) {
      const res = await server.admin('/_replicator/_index', { method: 'POST', body: { index: { fields }, ddoc: `by-${fields[0]}` } });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(async () => server.close());

  test('issue 32 item 9: a server admin\'s _find in _replicator uses a json index; users do not list it', async () => {
    const admin = await server.admin('/_replicator/_explain', { method: 'POST', body: { selector: { note: 'x' } } });
    assert.equal(admin.status, 200, admin.text);
    assert.equal(admin.body.index.ddoc, '_design/by-note');
    const bySource = await server.admin('/_replicator/_explain', { method: 'POST', body: { selector: { source: { $gt: null } } } });
    assert.equal(bySource.body.index.ddoc, '_design/by-source');
    const user = await server.request('/_replicator/_find', { auth: BOB, method: 'POST', body: { selector: { source: { $gt: null } } } });
    assert.equal(user.status, 401, 'listing _replicator is for server admins');
  });
});
