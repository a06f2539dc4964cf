// GET /{db}/_design/{d}/_info: collator_versions and the index's real sizes (couch_mrview_index:get(info)).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';
import { collatorVersion } from '../../src/collation/collator-version.js';

interface Sizes {
  file: number;
  active: number;
  external: number;
}

describeOnEachBackend('view index sizes and collator versions in _info', (server) => {
  const admin = (path: string, options: Parameters<ReturnType<typeof server>['admin']>[1] = {}) => server().admin(path, options);
  const map = 'function (doc) { if (doc.tag) emit([doc.tag, doc.n], doc.text); }';
  const docs = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ _id: `doc${from + i}`, tag: `t${(from + i) % 7}`, n: from + i, text: 'x'.repeat((from + i) % 50) + '\u00e9' }));
  /** The JSON text of the keys and values the map emits for `list`, in UTF-8 bytes. */
  const external = (list: ReturnType<typeof docs>) => list.reduce((sum, doc) => sum + Buffer.byteLength(JSON.stringify([doc.tag, doc.n])) + Buffer.byteLength(JSON.stringify(doc.text)), 0);
  const info = async (name: string) => {
    const res = await admin(`/vsizes/_design/${name}/_info`);
    assert.equal(res.status, 200);
    return res.body.view_index as { sizes: Sizes; collator_versions: string[]; update_seq: number };
  };
  before(async () => {
    assert.equal((await admin('/vsizes', { method: 'PUT' })).status, 201);
    assert.equal((await admin('/vsizes/_design/s', { method: 'PUT', body: { views: { v: { map }, c: { map, reduce: '_count' } } } })).status, 201);
  });

  test('an index never built reports zero sizes; every index lists the ICU collator version of its weights', async () => {
    const index = await info('s');
    assert.deepEqual(index.sizes, { file: 0, active: 0, external: 0 });
    assert.deepEqual(index.collator_versions, [collatorVersion()]);
  });

  test('a built index: external is its keys\' and values\' JSON, 0 < active <= file, all growing with the rows', async () => {
    const first = docs(0, 300);
    assert.equal((await admin('/vsizes/_bulk_docs', { method: 'POST', body: { docs: first } })).status, 201);
    assert.equal((await admin('/vsizes/_design/s/_view/v?limit=1')).status, 200);
    const small = (await info('s')).sizes;
    assert.equal(small.external, external(first));
    assert.ok(small.active > 0 && small.active <= small.file, JSON.stringify(small));
    const second = docs(300, 900);
    assert.equal((await admin('/vsizes/_bulk_docs', { method: 'POST', body: { docs: second } })).status, 201);
    assert.equal((await admin('/vsizes/_design/s/_view/c')).body.rows[0].value, 1200);
    const large = (await info('s')).sizes;
    assert.equal(large.external, external([...first, ...second]));
    assert.ok(large.active > small.active && large.active <= large.file && large.file > small.file, JSON.stringify({ small, large }));
  });

  test('deleted documents leave the index\'s external and active sizes', async () => {
    const before = (await info('s')).sizes;
    const gone = docs(0, 300);
    const revs = await admin('/vsizes/_all_docs', { method: 'POST', body: { keys: gone.map((doc) => doc._id) } });
    const deletions = revs.body.rows.map((row: { id: string; value: { rev: string } }) => ({ _id: row.id, _rev: row.value.rev, _deleted: true }));
    assert.equal((await admin('/vsizes/_bulk_docs', { method: 'POST', body: { docs: deletions } })).status, 201);
    assert.equal((await admin('/vsizes/_design/s/_view/c')).body.rows[0].value, 900);
    const after = (await info('s')).sizes;
    assert.equal(after.external, external(docs(300, 900)));
    assert.ok(after.active < before.active && after.active <= after.file, JSON.stringify({ before, after }));
  });
});
