// Issue 40 item 1: every write goes through one pipeline, in CouchDB's order: access and the conflict
// check of every document before any hook or validation function sees it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

describe('one write pipeline for single and bulk writes', () => {
  let server: TestServer;
  const frozen = {
    _id: '_design/frozen',
    validate_doc_update: `function (newDoc, oldDoc) {
      if (oldDoc && oldDoc.frozen && !newDoc.unfreeze) throw({forbidden: 'frozen: ' + oldDoc._rev});
    }`,
  };
  before(async () => {
    server = await startServer();
    assert.equal((await server.admin('/w', { method: 'PUT' })).status, 201);
    assert.equal((await server.admin('/w/_design/frozen', { method: 'PUT', body: frozen })).status, 201);
  });
  after(async () => server.close());

  /** Documents whose first revision was frozen and whose current one is not: the first is stale. */
  async function staleRevisions(prefix: string, count: number): Promise<string[]> {
    const stale: string[] = [];
    for (let index = 0; index < count; index++) {
      const first = await server.admin(`/w/${prefix}${index}`, { method: 'PUT', body: { frozen: true } });
      assert.equal(first.status, 201);
      const second = await server.admin(`/w/${prefix}${index}`, { method: 'PUT', body: { _rev: first.body.rev, unfreeze: true } });
      assert.equal(second.status, 201);
      stale.push(first.body.rev);
    }
    return stale;
  }

  test('issue 40 item 1: a _bulk_docs row with a stale _rev is a conflict before validation sees the stale revision, as a single PUT', async () => {
    const stale = await staleRevisions('b', 8);
    const single = await server.admin('/w/b0', { method: 'PUT', body: { _rev: stale[0], v: 1 } });
    assert.equal(single.status, 409);
    assert.equal(single.body.error, 'conflict');
    const docs = stale.map((rev, index) => ({ _id: `b${index}`, _rev: rev, v: 2 }));
    const bulk = await server.admin('/w/_bulk_docs', { method: 'POST', body: { docs } });
    assert.equal(bulk.status, 201);
    assert.deepEqual(
      bulk.body,
      docs.map((doc) => ({ id: doc._id, error: 'conflict', reason: 'Document update conflict.' })),
    );
  });

  test('issue 40 item 1: in one batch, conflicts, validation refusals and writes each get their own row', async () => {
    const [stale] = await staleRevisions('m', 1);
    const frozenDoc = await server.admin('/w/cold', { method: 'PUT', body: { frozen: true } });
    const docs = [
      { _id: 'm0', _rev: stale, v: 1 },
      { _id: 'cold', _rev: frozenDoc.body.rev, v: 1 },
      { _id: 'fresh', v: 1 },
      { _id: '_local/note', v: 1 },
    ];
    const bulk = await server.admin('/w/_bulk_docs', { method: 'POST', body: { docs } });
    assert.equal(bulk.status, 201);
    assert.deepEqual(bulk.body[0], { id: 'm0', error: 'conflict', reason: 'Document update conflict.' });
    assert.deepEqual(bulk.body[1], { id: 'cold', error: 'forbidden', reason: `frozen: ${frozenDoc.body.rev}` });
    assert.equal(bulk.body[2].ok, true);
    assert.deepEqual(bulk.body[3], { ok: true, id: '_local/note', rev: '0-1' });
  });

  test('issue 40 item 1: DELETE of a missing document is 404, of a stale revision 409', async () => {
    assert.equal((await server.admin('/w/never?rev=1-abc', { method: 'DELETE' })).status, 404);
    const [stale] = await staleRevisions('d', 1);
    assert.equal((await server.admin(`/w/d0?rev=${stale}`, { method: 'DELETE' })).status, 409);
  });
});
