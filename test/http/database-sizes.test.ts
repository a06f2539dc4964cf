// GET /{db} sizes: external (the leaves' JSON), active (live records) <= file (what compaction has yet to reclaim too).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

interface Sizes {
  file: number;
  active: number;
  external: number;
}

describeOnEachBackend('database sizes', (server) => {
  const admin = (path: string, options: Parameters<ReturnType<typeof server>['admin']>[1] = {}) => server().admin(path, options);
  const sizes = async (db: string): Promise<Sizes> => {
    const res = await admin(`/${db}`);
    assert.equal(res.status, 200);
    return res.body.sizes as Sizes;
  };
  const compacted = async (db: string): Promise<Sizes> => {
    assert.equal((await admin(`/${db}/_compact`, { method: 'POST', body: {} })).status, 202);
    for (;;) {
      const info = (await admin(`/${db}`)).body;
      if (info.compact_running === false) return info.sizes as Sizes;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

  test('an empty database takes nothing; documents count their bodies\' JSON as external, and ids and trees too as active', async () => {
    assert.equal((await admin('/dbsizes', { method: 'PUT' })).status, 201);
    assert.deepEqual(await sizes('dbsizes'), { file: 0, active: 0, external: 0 });
    const bodies = Array.from({ length: 40 }, (_, i) => ({ n: i, text: '\u00e9'.repeat(i), nested: { list: [i, 'x'] } }));
    const docs = bodies.map((body, i) => ({ _id: `doc-${i}`, ...body }));
    assert.equal((await admin('/dbsizes/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    const after = await sizes('dbsizes');
    assert.equal(after.external, bodies.reduce((sum, body) => sum + bytes(body), 0));
    // Each document also keeps its id, its winner and its revision tree (a revision id of 32 hex digits at least).
    assert.ok(after.active >= after.external + docs.length * 32, JSON.stringify(after));
    assert.equal(after.file, after.active, 'nothing to reclaim yet');
  });

  test('superseded revisions count in file until compaction; the leaf stays active', async () => {
    assert.equal((await admin('/dbsizes2', { method: 'PUT' })).status, 201);
    let rev: string | undefined;
    for (let v = 0; v < 6; v++) rev = (await admin('/dbsizes2/doc', { method: 'PUT', body: { v, padding: 'p'.repeat(500), ...(rev ? { _rev: rev } : {}) } })).body.rev;
    const before = await sizes('dbsizes2');
    assert.equal(before.external, bytes({ v: 5, padding: 'p'.repeat(500) }));
    assert.ok(before.file >= before.active + 5 * 500, JSON.stringify(before));
    const after = await compacted('dbsizes2');
    assert.deepEqual(after, { file: before.active, active: before.active, external: before.external });
  });

  test('attachments and _local documents are active data; an attachment no revision names is not', async () => {
    assert.equal((await admin('/dbsizes3', { method: 'PUT' })).status, 201);
    const put = await admin('/dbsizes3/withatt', { method: 'PUT', body: { _attachments: { 'a.bin': { content_type: 'application/octet-stream', data: Buffer.alloc(3000, 7).toString('base64') } } } });
    assert.equal(put.status, 201);
    const withAttachment = await sizes('dbsizes3');
    assert.ok(withAttachment.active >= withAttachment.external + 3000, JSON.stringify(withAttachment));
    assert.equal(withAttachment.file, withAttachment.active);
    assert.equal((await admin('/dbsizes3/_local/checkpoint', { method: 'PUT', body: { history: 'h'.repeat(1000) } })).status, 201);
    const withLocal = await sizes('dbsizes3');
    assert.ok(withLocal.active >= withAttachment.active + 1000 && withLocal.external === withAttachment.external, JSON.stringify(withLocal));
    assert.equal((await admin(`/dbsizes3/withatt?rev=${put.body.rev}`, { method: 'DELETE' })).status, 200);
    const deleted = await sizes('dbsizes3');
    assert.ok(deleted.active < withLocal.active - 3000 + 200, `the attachment left active data: ${JSON.stringify(deleted)}`);
    assert.ok(deleted.file >= deleted.active + 3000, JSON.stringify(deleted));
  });

  test('_dbs_info reports the same sizes as GET /{db}', async () => {
    const listed = await admin('/_dbs_info', { method: 'POST', body: { keys: ['dbsizes2'] } });
    assert.deepEqual(listed.body[0].info.sizes, await sizes('dbsizes2'));
  });
});
