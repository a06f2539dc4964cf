// POST /{db}/_compact stems every revision tree to the database's _revs_limit, as CouchDB's compaction does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

describeOnEachBackend('compaction stems revision trees to _revs_limit', (server) => {
  const admin = (path: string, options: Parameters<ReturnType<typeof server>['admin']>[1] = {}) => server().admin(path, options);
  const compact = async (db: string) => {
    assert.equal((await admin(`/${db}/_compact`, { method: 'POST', body: {} })).status, 202);
    while ((await admin(`/${db}`)).body.compact_running !== false) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  /** Writes `count` revisions of `id`; answers them, oldest first. */
  const writeRevisions = async (db: string, id: string, count: number) => {
    const revs: string[] = [];
    for (let v = 0; v < count; v++) {
      const res = await admin(`/${db}/${id}`, { method: 'PUT', body: { v, ...(revs.length > 0 ? { _rev: revs[revs.length - 1] } : {}) } });
      assert.equal(res.status, 201);
      revs.push(res.body.rev);
    }
    return revs;
  };
  const revisionIds = async (db: string, id: string) => (await admin(`/${db}/${id}?revs=true`)).body._revisions as { start: number; ids: string[] };
  const hash = (rev: string) => rev.split('-')[1]!;

  test('a _revs_limit lowered after the writes: compaction keeps the last 3 revisions; revs, revs_info and open_revs agree', async () => {
    assert.equal((await admin('/stemdb', { method: 'PUT' })).status, 201);
    const revs = await writeRevisions('stemdb', 'doc', 10);
    await writeRevisions('stemdb', 'short', 2);
    assert.equal((await admin('/stemdb/_revs_limit', { method: 'PUT', body: 3 })).status, 200);
    assert.equal((await revisionIds('stemdb', 'doc')).ids.length, 10, 'writes before the limit keep their history until compaction');
    await compact('stemdb');
    assert.deepEqual(await revisionIds('stemdb', 'doc'), { start: 10, ids: revs.slice(7).reverse().map(hash) });
    assert.equal((await revisionIds('stemdb', 'short')).ids.length, 2, 'a shorter history is left as it was');
    const revsInfo = (await admin('/stemdb/doc?revs_info=true')).body._revs_info as { rev: string; status: string }[];
    assert.deepEqual(revsInfo.map((info) => info.rev), revs.slice(7).reverse());
    assert.deepEqual(revsInfo.map((info) => info.status), ['available', 'missing', 'missing']);
    const open = await admin('/stemdb/doc?open_revs=all&revs=true', { headers: { Accept: 'application/json' } });
    assert.deepEqual(open.body[0].ok._revisions, { start: 10, ids: revs.slice(7).reverse().map(hash) });
    assert.equal((await admin(`/stemdb/doc?rev=${revs[2]}`)).status, 404);
    assert.equal((await admin('/stemdb/doc')).body.v, 9);
  });

  test('_revs_limit 3 before 10 writes: 3 revisions after compaction, and replication copies that history', async () => {
    assert.equal((await admin('/stemdb2', { method: 'PUT' })).status, 201);
    assert.equal((await admin('/stemdb2/_revs_limit', { method: 'PUT', body: 3 })).status, 200);
    const revs = await writeRevisions('stemdb2', 'doc', 10);
    await compact('stemdb2');
    assert.deepEqual(await revisionIds('stemdb2', 'doc'), { start: 10, ids: revs.slice(7).reverse().map(hash) });
    const copied = await admin('/_replicate', { method: 'POST', body: { source: 'stemdb2', target: 'stemcopy', create_target: true } });
    assert.equal(copied.status, 200, JSON.stringify(copied.body));
    assert.deepEqual(await revisionIds('stemcopy', 'doc'), { start: 10, ids: revs.slice(7).reverse().map(hash) });
    // An edit after the stemming replicates on top of the copied history.
    const next = await admin('/stemdb2/doc', { method: 'PUT', body: { v: 10, _rev: revs[9] } });
    assert.equal((await admin('/_replicate', { method: 'POST', body: { source: 'stemdb2', target: 'stemcopy' } })).status, 200);
    const copy = await admin('/stemcopy/doc?revs=true');
    assert.deepEqual([copy.body._rev, copy.body.v, copy.body._revisions.ids.length], [next.body.rev, 10, 4]);
    // And back: the copy's history meets the source's stemmed tree without a conflict.
    assert.equal((await admin('/_replicate', { method: 'POST', body: { source: 'stemcopy', target: 'stemdb2' } })).status, 200);
    assert.equal((await admin('/stemdb2/doc?conflicts=true')).body._conflicts, undefined);
  });
});
