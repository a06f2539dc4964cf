/**
 * `_bulk_docs` and replicated `PUT` under the document limits (`[couchdb] max_document_leaves`,
 * `max_document_revisions`), and large batches written a slice at a time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

const rev = (generation: number, n: number): string => `${generation}-${n.toString(16).padStart(32, '0')}`;
const conflicting = (count: number, id = 'x'): object[] => Array.from({ length: count }, (_, i) => ({ _id: id, _rev: rev(1, i), v: i }));

describe('_bulk_docs with many revisions of one document', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/db', { method: 'PUT' });
  });
  after(async () => server.close());

  test('new_edits=false with 4000 conflicting revisions keeps 1000 leaves and refuses the rest with too_large rows', async () => {
    const res = await server.admin('/db/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: conflicting(4000) } });
    assert.equal(res.status, 201);
    assert.equal(res.body.length, 3000, 'accepted replicated revisions have no row');
    assert.deepEqual(res.body[0], {
      id: 'x',
      error: 'too_large',
      reason: 'Document would have more than 1000 leaf revisions; resolve its conflicts first.',
    });
    const doc = await server.admin('/db/x?conflicts=true');
    assert.equal(doc.body._rev, rev(1, 999));
    assert.equal(doc.body._conflicts.length, 999);
  });

  test('a revision extending a leaf of a document at the limit is accepted', async () => {
    const res = await server.admin('/db/_bulk_docs', {
      method: 'POST',
      body: { new_edits: false, docs: [{ _id: 'x', _revisions: { start: 2, ids: ['f'.repeat(32), rev(1, 5).slice(2)] }, v: 'next' }] },
    });
    assert.deepEqual([res.status, res.body], [201, []]);
    assert.equal((await server.admin('/db/x?conflicts=true')).body._conflicts.length, 999);
  });

  test('PUT ?new_edits=false beyond the limit answers 413 too_large', async () => {
    const res = await server.admin(`/db/x?new_edits=false`, { method: 'PUT', body: { _rev: rev(1, 5000), v: 1 } });
    assert.equal(res.status, 413);
    assert.equal(res.body.error, 'too_large');
  });

  test('a plain _bulk_docs of 2000 new documents answers every one, in order', async () => {
    const docs = Array.from({ length: 2000 }, (_, i) => ({ _id: `p${String(i).padStart(5, '0')}`, i }));
    const res = await server.admin('/db/_bulk_docs', { method: 'POST', body: { docs } });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.map((row: { id: string; ok: boolean }) => [row.id, row.ok]), docs.map((doc) => [doc._id, true]));
    const listed = await server.admin('/db/_all_docs?startkey=%22p%22&endkey=%22q%22');
    assert.equal(listed.body.rows.length, 2000);
  });
});

describe('document limits are settings', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: '[couchdb]\nmax_document_leaves = 3\nmax_document_revisions = 20\n' });
    await server.admin('/db', { method: 'PUT' });
  });
  after(async () => server.close());

  test('[couchdb] max_document_leaves bounds the leaves replication may give one document', async () => {
    const res = await server.admin('/db/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: conflicting(5, 'few') } });
    assert.deepEqual(res.body.map((row: { error: string }) => row.error), ['too_large', 'too_large']);
    assert.match(res.body[0].reason, /more than 3 leaf revisions/);
  });

  test('[couchdb] max_document_revisions bounds the revisions one document keeps', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => (30 - i).toString(16).padStart(32, '0'));
    const res = await server.admin('/db/long?new_edits=false', { method: 'PUT', body: { _revisions: { start: 30, ids }, v: 1 } });
    assert.equal(res.status, 413);
    assert.deepEqual(res.body, { error: 'too_large', reason: 'Document would keep more than 20 revisions.' });
  });

  test('a change through _config applies to the next request', async () => {
    const set = await server.admin('/_node/_local/_config/couchdb/max_document_leaves', { method: 'PUT', body: '"6"' });
    assert.equal(set.status, 200);
    // `few` has 3 leaves: 3 more are accepted under the new limit, the seventh is not.
    const res = await server.admin('/db/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: conflicting(7, 'few') } });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.map((row: { error: string }) => row.error), ['too_large']);
    assert.match(res.body[0].reason, /more than 6 leaf revisions/);
  });
});
