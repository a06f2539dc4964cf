import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend } from '../support/backends.js';
import type { DocumentEdit, JsonObject, Storage } from '../../src/storage/storage.js';

async function put(storage: Storage, edit: DocumentEdit): Promise<string> {
  const [result] = await storage.writeDocuments('db', [edit], { newEdits: true });
  assert.ok(result.ok, JSON.stringify(result));
  return result.rev;
}

async function history(storage: Storage, id: string, count: number): Promise<string[]> {
  const revs: string[] = [];
  for (let v = 1; v <= count; v++) revs.push(await put(storage, { id, body: { v } as JsonObject, deleted: false, baseRev: revs.at(-1) }));
  return revs;
}

/** `doc` with two branches from 1-…: `2-a…` by a normal edit, a second 2- by replication. */
async function conflicted(storage: Storage): Promise<{ root: string; mine: string; theirs: string }> {
  const [root] = await history(storage, 'doc', 1);
  const mine = await put(storage, { id: 'doc', body: { side: 'mine' }, deleted: false, baseRev: root });
  const theirs = `2-${'f'.repeat(32)}`;
  const [merged] = await storage.writeDocuments('db', [{ id: 'doc', body: { side: 'theirs' }, deleted: false, revPath: [theirs, root!] }], { newEdits: false });
  assert.ok(merged.ok);
  return { root: root!, mine, theirs };
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: _revs_limit and purge`, () => {
    const ctx = freshBackend(backend);

    it('a database starts at revs_limit 1000 and keeps a new limit; writes stem the tree to it', async () => {
      const { storage } = ctx();
      assert.equal((await storage.databaseInfo('db'))?.revsLimit, 1000);
      assert.equal(await storage.setDatabaseLimit('db', 'revs_limit', 3), true);
      assert.equal(await storage.setDatabaseLimit('nope', 'revs_limit', 3), false);
      assert.equal((await storage.databaseInfo('db'))?.revsLimit, 3);
      const revs = await history(storage, 'doc', 6);
      const [tree] = await storage.revisionTrees('db', ['doc']);
      assert.deepEqual(Object.keys(tree!).sort(), revs.slice(3).sort(), 'only the last three revisions stay');
      const read = await storage.readDocument('db', 'doc', { revsInfo: true });
      assert.equal(read?.revisionPath.length, 3);
      assert.equal(read?.revisionStart, 6);
    });

    it('the revs_limit survives a reopen', async () => {
      const opened = ctx();
      await opened.storage.setDatabaseLimit('db', 'revs_limit', 7);
      const storage = await opened.reopen();
      assert.equal((await storage.databaseInfo('db'))?.revsLimit, 7);
    });

    it('purging the only leaf removes the document, its history and its change; counters follow', async () => {
      const { storage } = ctx();
      const revs = await history(storage, 'doc', 3);
      await history(storage, 'other', 1);
      const before = await storage.databaseInfo('db');
      assert.deepEqual(await storage.purgeDocuments('db', [{ id: 'doc', revs: [revs[2]!, '1-unknown'] }, { id: 'missing', revs: ['1-x'] }]), [[revs[2]], []]);
      assert.equal(await storage.readDocument('db', 'doc'), undefined);
      assert.equal(await storage.readDocument('db', 'doc', { rev: revs[0] }), undefined);
      const after = await storage.databaseInfo('db');
      assert.deepEqual([after?.docCount, after?.purgeSeq], [before!.docCount - 1, 1]);
      assert.ok(after!.updateSeq > before!.updateSeq, 'a purge moves the update sequence');
      assert.ok(after!.dataSize < before!.dataSize);
      assert.deepEqual((await storage.changes('db', {})).map((row) => row.id), ['other']);
      const listed = await storage.listDocuments('db', {});
      assert.deepEqual(listed.rows.map((row) => row.id), ['other']);
    });

    it('purging a non-leaf revision does nothing; purging one branch keeps the other and moves the document', async () => {
      const { storage } = ctx();
      const { root, mine, theirs } = await conflicted(storage);
      assert.deepEqual(await storage.purgeDocuments('db', [{ id: 'doc', revs: [root] }]), [[]]);
      assert.equal((await storage.databaseInfo('db'))?.purgeSeq, 0);
      const seqBefore = (await storage.readDocument('db', 'doc'))!.seq;
      assert.deepEqual(await storage.purgeDocuments('db', [{ id: 'doc', revs: [theirs] }]), [[theirs]]);
      const doc = await storage.readDocument('db', 'doc');
      assert.deepEqual([doc?.rev, doc?.conflicts, doc?.body], [mine, [], { side: 'mine' }]);
      assert.ok(doc!.seq > seqBefore);
      const [tree] = await storage.revisionTrees('db', ['doc']);
      assert.deepEqual(Object.keys(tree!).sort(), [root, mine].sort(), 'the shared ancestor stays');
      const [change] = await storage.changes('db', {});
      assert.deepEqual([change?.id, change?.seq], ['doc', doc!.seq]);
    });

    it('purged_infos_limit is kept per database', async () => {
      const { storage } = ctx();
      assert.equal((await storage.databaseInfo('db'))?.purgedInfosLimit, 1000);
      await storage.setDatabaseLimit('db', 'purged_infos_limit', 2);
      for (let i = 0; i < 4; i++) {
        const [rev] = await history(storage, `d${i}`, 1);
        await storage.purgeDocuments('db', [{ id: `d${i}`, revs: [rev!] }]);
      }
      const info = await storage.databaseInfo('db');
      assert.deepEqual([info?.purgedInfosLimit, info?.purgeSeq, info?.docCount], [2, 4, 0]);
      assert.deepEqual((await storage.purgedInfos('db')).map((entry) => entry.id), ['d2', 'd3'], 'only the latest two are remembered');
      await storage.setDatabaseLimit('db', 'purged_infos_limit', 1);
      assert.deepEqual((await storage.purgedInfos('db')).map((entry) => entry.id), ['d3']);
      await assert.rejects(storage.purgedInfos('nope'), (error: { status?: number }) => error.status === 404);
    });

    it('a purge of a missing database is refused as not found', async () => {
      const { storage } = ctx();
      await assert.rejects(storage.purgeDocuments('nope', [{ id: 'a', revs: ['1-a'] }]), (error: { status?: number }) => error.status === 404);
    });
  });
}
