import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

const basic = (name: string, password: string): string => `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;

/** Against the compiled binary: stored validate_doc_update functions run (in the QuickJS sandbox) for every writer. */
describe('the real binary: a database with a validate_doc_update runs it on writes', () => {
  let data: string;
  let divan: RunningDivan;
  const admin = { Authorization: basic('boss', 'b0ss-pass') };
  const member = { Authorization: basic('mia', 'mia-pass') };

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'divan-vdu-'));
    divan = await startDivan(['--port', '0', '--data', data], { COUCHDB_USER: 'boss', COUCHDB_PASSWORD: 'b0ss-pass' });
    const user = { _id: 'org.couchdb.user:mia', name: 'mia', type: 'user', roles: [], password: 'mia-pass' };
    assert.equal((await request(divan.url, '/_users/org.couchdb.user:mia', { method: 'PUT', body: user, headers: admin })).status, 201);
    assert.equal((await request(divan.url, '/app', { method: 'PUT', headers: admin })).status, 201);
    const security = { admins: { names: [], roles: [] }, members: { names: ['mia'], roles: [] } };
    assert.equal((await request(divan.url, '/app/_security', { method: 'PUT', body: security, headers: admin })).status, 200);
    const rules = { _id: '_design/rules', validate_doc_update: 'function (newDoc) { if (!newDoc.owner) throw({forbidden: "owner required"}); }' };
    assert.equal((await request(divan.url, '/app/_design/rules', { method: 'PUT', body: rules, headers: admin })).status, 201);
  });
  after(async () => {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
  });

  test('a member write the function refuses is answered with its message and not stored', async () => {
    const res = await request(divan.url, '/app/no-owner', { method: 'PUT', body: { v: 1 }, headers: member });
    assert.deepEqual([res.status, res.body], [403, { error: 'forbidden', reason: 'owner required' }]);
    assert.equal((await request(divan.url, '/app/no-owner', { headers: admin })).status, 404);
    assert.equal((await request(divan.url, '/app/with-owner', { method: 'PUT', body: { owner: 'mia' }, headers: member })).status, 201);
  });

  test('a _bulk_docs by a member stores the documents that pass and refuses the others', async () => {
    const res = await request(divan.url, '/app/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'a', owner: 'mia' }, { _id: 'b' }] }, headers: member });
    assert.equal(res.status, 201);
    assert.equal(res.body[0].ok, true);
    assert.deepEqual(res.body[1], { id: 'b', error: 'forbidden', reason: 'owner required' });
    assert.equal((await request(divan.url, '/app/a', { headers: admin })).status, 200);
    assert.equal((await request(divan.url, '/app/b', { headers: admin })).status, 404);
  });

  test('the function applies to the server admin too (as CouchDB)', async () => {
    const res = await request(divan.url, '/app/by-admin', { method: 'PUT', body: { v: 1 }, headers: admin });
    assert.equal(res.status, 403);
    assert.equal((await request(divan.url, '/app/by-admin', { method: 'PUT', body: { owner: 'boss' }, headers: admin })).status, 201);
  });
});
