// Real client: PouchDB 9 replicating from the real binary through a design document's filter
// function with query_params, and pushing into a database whose validate_doc_update refuses some.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import PouchDB from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import memoryAdapter from 'pouchdb-adapter-memory';
import replication from 'pouchdb-replication';
import { createDatabase, createUser, startClientServer, type ClientServer } from '../support/clients.js';
import { request } from '../support/http.js';

PouchDB.plugin(memoryAdapter).plugin(httpAdapter).plugin(replication);

const ADMIN: [string, string] = ['admin', 'admin-pass'];

describe('PouchDB 9 replication with filter functions and validate_doc_update', () => {
  let server: ClientServer;
  const remote = (db: string) => new PouchDB<Record<string, unknown>>(`${server.url}/${db}`, { auth: { username: 'alice', password: 'alice-pass' }, skip_setup: true });

  before(async () => {
    server = await startClientServer();
    await createUser(server.url, 'alice', 'alice-pass');
    await createDatabase(server.url, 'shared', ['alice']);
    // Everyone's documents first, then the design document (whose function would refuse bob's).
    const docs = Array.from({ length: 30 }, (_, i) => ({ _id: `doc-${String(i).padStart(2, '0')}`, owner: i % 3 === 0 ? 'alice' : 'bob', n: i }));
    assert.equal((await request(server.url, '/shared/_bulk_docs', { method: 'POST', body: { docs }, auth: ADMIN })).status, 201);
    const ddoc = {
      filters: { by_owner: 'function (doc, req) { return doc.owner === req.query.owner; }' },
      validate_doc_update: 'function (newDoc, oldDoc, userCtx) { if (!newDoc._deleted && newDoc.owner !== userCtx.name) throw({forbidden: "owner must be " + userCtx.name}); }',
    };
    assert.equal((await request(server.url, '/shared/_design/app', { method: 'PUT', body: ddoc, auth: ADMIN })).status, 201);
  });
  after(async () => server.close());

  test('a pull with filter + query_params brings only the documents the function passes', async () => {
    const local = new PouchDB<Record<string, unknown>>('filter-pull', { adapter: 'memory' });
    const result = await local.replicate.from(remote('shared'), { filter: 'app/by_owner', query_params: { owner: 'alice' } });
    assert.equal(result.ok, true);
    const all = await local.allDocs();
    assert.deepEqual(all.rows.map((row) => row.id).filter((id) => !id.startsWith('_design/')), Array.from({ length: 10 }, (_, i) => `doc-${String(i * 3).padStart(2, '0')}`));
    await local.destroy();
  });

  test('a push through validate_doc_update stores what passes and reports the refused documents', async () => {
    const local = new PouchDB<Record<string, unknown>>('filter-push', { adapter: 'memory' });
    await local.bulkDocs([{ _id: 'mine', owner: 'alice' }, { _id: 'theirs', owner: 'bob' }]);
    const result = await local.replicate.to(remote('shared'));
    assert.equal(result.docs_written, 1);
    assert.equal(result.doc_write_failures, 1);
    assert.equal((await request(server.url, '/shared/mine', { auth: ADMIN })).status, 200);
    assert.equal((await request(server.url, '/shared/theirs', { auth: ADMIN })).status, 404);
    await local.destroy();
  });
});
