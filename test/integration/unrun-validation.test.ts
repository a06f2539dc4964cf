import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

const basic = (name: string, password: string): string => `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;

/** Security issue 14, item 6, against the compiled binary: stored validate_doc_update functions fail closed. */
describe('the real binary: a database with a validate_doc_update refuses non-admin writes', () => {
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

  test('a member write that the function would have refused is not stored silently', async () => {
    const res = await request(divan.url, '/app/no-owner', { method: 'PUT', body: { v: 1 }, headers: member });
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.error, 'forbidden');
    assert.match(res.body.reason, /_design\/rules has a validate_doc_update function/);
    assert.equal((await request(divan.url, '/app/no-owner', { headers: admin })).status, 404);
  });

  test('a _bulk_docs by a member answers each document with the refusal and writes none', async () => {
    const res = await request(divan.url, '/app/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'a', owner: 'mia' }, { _id: 'b' }] }, headers: member });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.map((row: { error: string }) => row.error), ['forbidden', 'forbidden']);
    assert.equal((await request(divan.url, '/app/a', { headers: admin })).status, 404);
  });

  test('the server admin still writes', async () => {
    assert.equal((await request(divan.url, '/app/by-admin', { method: 'PUT', body: { owner: 'boss' }, headers: admin })).status, 201);
  });
});
