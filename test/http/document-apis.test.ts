import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

describeOnEachBackend('_local_docs, _all_docs/queries, COPY, meta, open_revs and unknown endpoints', (server) => {
  before(async () => {
    await server().admin('/apis', { method: 'PUT' });
    await server().admin('/apis/_bulk_docs', { method: 'POST', body: { docs: ['a', 'b', 'c', 'd'].map((id) => ({ _id: id, n: id })) } });
    for (const id of ['one', 'two', 'three']) await server().admin(`/apis/_local/${id}`, { method: 'PUT', body: { id } });
  });

  test('_local_docs lists local documents with null total_rows and offset, honouring _all_docs options', async () => {
    const all = await server().admin('/apis/_local_docs');
    assert.equal(all.status, 200);
    assert.deepEqual(all.body, {
      total_rows: null,
      offset: null,
      rows: ['one', 'three', 'two'].map((id) => ({ id: `_local/${id}`, key: `_local/${id}`, value: { rev: '0-1' } })),
    });
    const ranged = await server().admin('/apis/_local_docs?startkey="_local/t"&include_docs=true&limit=1');
    assert.deepEqual(ranged.body.rows, [{ id: '_local/three', key: '_local/three', value: { rev: '0-1' }, doc: { _id: '_local/three', _rev: '0-1', id: 'three' } }]);
    const down = await server().admin('/apis/_local_docs?descending=true&skip=1');
    assert.deepEqual(down.body.rows.map((row: { id: string }) => row.id), ['_local/three', '_local/one']);
    const keyed = await server().admin('/apis/_local_docs', { method: 'POST', body: { keys: ['_local/two', '_local/none'] } });
    assert.deepEqual(keyed.body.rows, [{ id: '_local/two', key: '_local/two', value: { rev: '0-1' } }, { key: '_local/none', error: 'not_found' }]);
    assert.equal((await server().admin('/apis/_all_docs')).body.rows.length, 4, '_all_docs still lists no local document');
    assert.equal((await server().admin('/nodb/_local_docs')).status, 404);
  });

  test('POST _all_docs/queries answers each query in order as results', async () => {
    const res = await server().admin('/apis/_all_docs/queries', {
      method: 'POST',
      body: { queries: [{ keys: ['b', 'zz'] }, { startkey: 'c', include_docs: true }, { limit: 1, skip: 1, descending: true }, {}] },
    });
    assert.equal(res.status, 200);
    const [keys, range, paged, everything] = res.body.results;
    assert.deepEqual(keys.rows.map((row: { key: string; error?: string }) => [row.key, row.error]), [['b', undefined], ['zz', 'not_found']]);
    assert.deepEqual(range.rows.map((row: { id: string; doc: { n: string } }) => row.doc.n), ['c', 'd']);
    assert.deepEqual(paged.rows.map((row: { id: string }) => row.id), ['c']);
    assert.deepEqual([everything.total_rows, everything.offset, everything.rows.length], [4, 0, 4]);
    assert.equal((await server().admin('/apis/_all_docs/queries')).status, 405);
    assert.equal((await server().admin('/apis/_all_docs/queries', { method: 'POST', body: { queries: 'x' } })).status, 400);
    const keysPost = await server().admin('/apis/_all_docs', { method: 'POST', body: { keys: ['d', 'a'] } });
    assert.deepEqual(keysPost.body.rows.map((row: { id: string }) => row.id), ['d', 'a'], '_all_docs POST keys keeps their order');
  });

  test('COPY copies a document to a new id, or over a named revision of an existing one', async () => {
    const copied = await server().admin('/apis/a', { method: 'COPY', headers: { Destination: 'a-copy' } });
    assert.equal(copied.status, 201);
    assert.equal(copied.body.id, 'a-copy');
    assert.match(copied.body.rev, /^1-/);
    assert.equal(copied.headers['etag'], `"${copied.body.rev}"`);
    assert.deepEqual((await server().admin('/apis/a-copy')).body.n, 'a');
    const conflict = await server().admin('/apis/b', { method: 'COPY', headers: { Destination: 'a-copy' } });
    assert.equal(conflict.status, 409);
    const over = await server().admin('/apis/b', { method: 'COPY', headers: { Destination: `a-copy?rev=${copied.body.rev}` } });
    assert.deepEqual([over.status, over.body.id], [201, 'a-copy']);
    assert.match(over.body.rev, /^2-/);
    assert.equal((await server().admin('/apis/a-copy')).body.n, 'b');
    const older = (await server().admin('/apis/a-copy', { method: 'COPY', headers: { Destination: 'from-old' }, })).body;
    assert.equal(older.ok, true);
    const fromRev = await server().admin(`/apis/a-copy?rev=${copied.body.rev}`, { method: 'COPY', headers: { Destination: 'from-first' } });
    assert.equal(fromRev.status, 201);
    assert.equal((await server().admin('/apis/from-first')).body.n, 'a', '?rev= picks the source revision');
    assert.deepEqual((await server().admin('/apis/a', { method: 'COPY' })).body, { error: 'bad_request', reason: 'Destination header is mandatory for COPY.' });
    assert.equal((await server().admin('/apis/missing', { method: 'COPY', headers: { Destination: 'x' } })).status, 404);
  });

  test('meta=true adds _revs_info, _conflicts and _deleted_conflicts (not _local_seq); revs_info alone too', async () => {
    const root = (await server().admin('/apis/meta', { method: 'PUT', body: { v: 1 } })).body.rev;
    await server().admin('/apis/meta', { method: 'PUT', body: { v: 2, _rev: root } });
    await server().admin('/apis/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [{ _id: 'meta', _rev: `2-${'a'.repeat(32)}`, _revisions: { start: 2, ids: ['a'.repeat(32), root.slice(2)] } }] } });
    const doc = (await server().admin('/apis/meta?meta=true')).body;
    assert.equal(doc._revs_info.length, 2);
    assert.deepEqual(doc._revs_info[1], { rev: root, status: 'available' });
    assert.equal(doc._conflicts.length, 1);
    assert.equal(doc._local_seq, undefined);
    const info = (await server().admin('/apis/meta?revs_info=true')).body;
    assert.equal(info._revs_info[0].rev, doc._rev);
    assert.equal(info._conflicts, undefined);
  });

  test('open_revs with conflicts=true never lists a branch among its own conflicts', async () => {
    const all = await server().admin('/apis/meta?open_revs=all&conflicts=true', { headers: { Accept: 'application/json' } });
    assert.equal(all.body.length, 2);
    for (const { ok } of all.body) assert.equal(ok._conflicts, undefined, ok._rev);
  });

  test('an unknown /{db}/_xxx names the endpoint in a 404; a write to it is a reserved id; a missing database stays 404 Database does not exist.', async () => {
    const unknown = await server().admin('/apis/_nothing');
    assert.deepEqual([unknown.status, unknown.body], [404, { error: 'not_found', reason: 'Database endpoint _nothing does not exist.' }]);
    const below = await server().admin('/apis/_all_docs/extra');
    assert.equal(below.body.reason, 'Database endpoint _all_docs/extra does not exist.');
    const write = await server().admin('/apis/_nothing', { method: 'PUT', body: {} });
    assert.deepEqual([write.status, write.body.reason], [400, 'Only reserved document ids may start with underscore.']);
    assert.deepEqual((await server().admin('/nodb/_nothing')).body, { error: 'not_found', reason: 'Database does not exist.' });
    assert.equal((await server().request('/apis/_nothing')).status, 401, 'no endpoint name for those who may not read the database');
  });
});
