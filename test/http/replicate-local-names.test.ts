// POST /_replicate with database names instead of URLs (Divan's addition): the job reads and writes
// with the caller's own identity, so a caller without access to a database cannot copy it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { createUser, FAST_INI, NO_LOCKOUT_INI } from '../support/users-helpers.js';

const ALICE: [string, string] = ['alice', 'alice-pass'];
const BOB: [string, string] = ['bob', 'bob-pass'];

const docIds = async (server: TestServer, db: string): Promise<string[]> => (await server.admin(`/${db}/_all_docs`)).body.rows.map((row: { id: string }) => row.id);

describe('POST /_replicate with local database names', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: `${FAST_INI}${NO_LOCKOUT_INI}` });
    await createUser(server, ...ALICE);
    await createUser(server, ...BOB);
    for (const db of ['secret', 'alice-copy', 'bob-copy']) assert.equal((await server.admin(`/${db}`, { method: 'PUT' })).status, 201);
    const members = (names: string[]) => ({ admins: { names: [], roles: [] }, members: { names, roles: [] } });
    assert.equal((await server.admin('/secret/_security', { method: 'PUT', body: members(['alice']) })).status, 200);
    assert.equal((await server.admin('/alice-copy/_security', { method: 'PUT', body: members(['alice']) })).status, 200);
    assert.equal((await server.admin('/bob-copy/_security', { method: 'PUT', body: members(['bob']) })).status, 200);
    const docs = [{ _id: 'plan', text: 'only for alice' }, { _id: 'keys', n: 2 }];
    assert.equal((await server.admin('/secret/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
  });
  after(async () => server.close());

  test('a server admin copies one database into a new one by names', async () => {
    const res = await server.admin('/_replicate', { method: 'POST', body: { source: 'secret', target: 'admin-copy', create_target: true } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.ok, true);
    assert.equal(res.body.history[0].docs_written, 2);
    assert.deepEqual(await docIds(server, 'admin-copy'), ['keys', 'plan']);
  });

  test('a member copies what they may read, with their own identity (Basic)', async () => {
    const res = await server.request('/_replicate', { method: 'POST', auth: ALICE, body: { source: 'secret', target: 'alice-copy' } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await docIds(server, 'alice-copy'), ['keys', 'plan']);
  });

  // CouchDB's replicator answers a source that refuses it with 401 (couch_replicator_api_wrap).
  const REFUSED = { error: 'unauthorized', reason: /^unauthorized to access or create database http:\/\/[^@]+\/secret\/$/ };

  test('a user without access to the source gets 401 and nothing of it is copied', async () => {
    const res = await server.request('/_replicate', { method: 'POST', auth: BOB, body: { source: 'secret', target: 'bob-copy' } });
    assert.equal(res.status, 401, res.text);
    assert.equal(res.body.error, REFUSED.error);
    assert.match(res.body.reason, REFUSED.reason);
    assert.deepEqual(await docIds(server, 'bob-copy'), []);
  });

  test('the identity of an AuthSession cookie is the one used, not the server\'s', async () => {
    const login = await server.request('/_session', { method: 'POST', body: { name: BOB[0], password: BOB[1] } });
    assert.equal(login.status, 200, login.text);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const refused = await server.request('/_replicate', { method: 'POST', headers: { Cookie: cookie }, body: { source: 'secret', target: 'bob-copy' } });
    assert.equal(refused.status, 401, refused.text);
    assert.match(refused.body.reason, REFUSED.reason);
    assert.deepEqual(await docIds(server, 'bob-copy'), []);
    const created = await server.request('/_replicate', { method: 'POST', headers: { Cookie: cookie }, body: { source: 'bob-copy', target: 'bob-new', create_target: true } });
    assert.equal(created.status, 401, `only a server admin may create a database: ${created.text}`);
    assert.equal((await server.admin('/bob-new')).status, 404);
  });

  test("only the credentials that authenticated the caller are presented: Basic of bob with alice's cookie is bob", async () => {
    const login = await server.request('/_session', { method: 'POST', body: { name: ALICE[0], password: ALICE[1] } });
    const aliceCookie = String(login.headers['set-cookie']).split(';')[0]!;
    const whoami = await server.request('/_session', { auth: BOB, headers: { Cookie: aliceCookie } });
    assert.equal(whoami.body.userCtx.name, BOB[0], 'explicit Basic decides (DESIGN.md)');
    const res = await server.request('/_replicate', { method: 'POST', auth: BOB, headers: { Cookie: aliceCookie }, body: { source: 'secret', target: 'bob-copy' } });
    assert.equal(res.status, 401, res.text);
    assert.deepEqual(await docIds(server, 'bob-copy'), []);
  });

  test('a database name that is not one is answered as the server would answer the caller', async () => {
    const res = await server.admin('/_replicate', { method: 'POST', body: { source: 'no-such-db', target: 'admin-copy' } });
    assert.equal(res.status, 404, res.text);
  });
});
