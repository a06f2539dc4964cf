// Map functions see `_conflicts` of a conflicted document, as CouchDB's indexer opens documents with
// their conflicts (PouchDB's replication suite: "Test _conflicts key").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

describeOnEachBackend('views of conflicted documents', (server) => {
  test('a map function sees _conflicts, and sees it go when the conflict is resolved', async () => {
    assert.equal((await server().admin('/vc', { method: 'PUT' })).status, 201);
    const map = 'function (doc) { if (doc._conflicts) emit(doc._id, [doc._rev].concat(doc._conflicts)); }';
    assert.equal((await server().admin('/vc/_design/c', { method: 'PUT', body: { views: { conflicts: { map } } } })).status, 201);
    const docs = [{ _id: 'a', _rev: '1-aaa', v: 1 }, { _id: 'a', _rev: '1-bbb', v: 2 }];
    assert.equal((await server().admin('/vc/_bulk_docs', { method: 'POST', body: { docs, new_edits: false } })).status, 201);
    const rows = (await server().admin('/vc/_design/c/_view/conflicts')).body.rows;
    assert.deepEqual(rows, [{ id: 'a', key: 'a', value: ['1-bbb', '1-aaa'] }]);
    assert.equal((await server().admin('/vc/a?rev=1-aaa', { method: 'DELETE' })).status, 200);
    assert.deepEqual((await server().admin('/vc/_design/c/_view/conflicts')).body.rows, []);
  });
});
