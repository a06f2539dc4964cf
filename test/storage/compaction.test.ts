import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend } from '../support/backends.js';
import { CouchError } from '../../src/errors/couch-error.js';
import { COMPACTION_SLICE } from '../../src/storage/kit/compaction-slices.js';
import type { DocumentEdit, JsonObject, Storage } from '../../src/storage/storage.js';

async function put(storage: Storage, edit: DocumentEdit): Promise<string> {
  const [result] = await storage.writeDocuments('db', [edit], { newEdits: true });
  assert.ok(result.ok, JSON.stringify(result));
  return result.rev;
}

/** Three revisions of `doc`: 1 → 2 → 3 (live), answers their revs oldest first. */
async function history(storage: Storage, id = 'doc'): Promise<string[]> {
  const revs: string[] = [];
  for (let v = 1; v <= 3; v++) revs.push(await put(storage, { id, body: { v } as JsonObject, deleted: false, baseRev: revs.at(-1) }));
  return revs;
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: older revision bodies and compaction`, () => {
    const ctx = freshBackend(backend);

    it('an older revision keeps its body, and its deleted flag, until compaction', async () => {
      const { storage } = ctx();
      const [rev1, rev2] = await history(storage);
      const removed = await put(storage, { id: 'doc', body: { gone: true }, deleted: true, baseRev: (await storage.readDocument('db', 'doc'))?.rev });
      const again = await put(storage, { id: 'doc', body: { back: 1 }, deleted: false });
      const old = await storage.readDocument('db', 'doc', { rev: rev1 });
      assert.deepEqual([old?.rev, old?.body, old?.deleted, old?.revisionPath.length], [rev1, { v: 1 }, false, 1]);
      const tombstone = await storage.readDocument('db', 'doc', { rev: removed });
      assert.deepEqual([tombstone?.body, tombstone?.deleted], [{ gone: true }, true]);
      assert.equal((await storage.readDocument('db', 'doc'))?.rev, again);
      await storage.compact('db');
      for (const rev of [rev1, rev2, removed]) assert.equal(await storage.readDocument('db', 'doc', { rev }), undefined, rev);
      assert.deepEqual((await storage.readDocument('db', 'doc'))?.body, { back: 1 });
    });

    it('revsInfo gives the path with available, deleted and missing statuses', async () => {
      const { storage } = ctx();
      const [rev1, rev2, rev3] = await history(storage);
      const removed = await put(storage, { id: 'doc', body: {}, deleted: true, baseRev: rev3 });
      const recreated = await put(storage, { id: 'doc', body: { v: 5 }, deleted: false });
      const read = await storage.readDocument('db', 'doc', { revsInfo: true });
      assert.deepEqual(read?.revsInfo, [
        { rev: recreated, status: 'available' },
        { rev: removed, status: 'deleted' },
        { rev: rev3, status: 'available' },
        { rev: rev2, status: 'available' },
        { rev: rev1, status: 'available' },
      ]);
      await storage.compact('db');
      const compacted = await storage.readDocument('db', 'doc', { revsInfo: true });
      assert.deepEqual(compacted?.revsInfo?.map((info) => info.status), ['available', 'missing', 'missing', 'missing', 'missing']);
      assert.deepEqual((await storage.readDocument('db', 'doc', { rev: rev3, revsInfo: true }))?.revsInfo, undefined, 'compacted away');
      assert.equal((await storage.readDocument('db', 'doc'))?.revsInfo, undefined, 'only when asked');
    });

    it('a replicated path has bodies for its leaf only: ancestors are missing', async () => {
      const { storage } = ctx();
      const path = [`3-${'c'.repeat(32)}`, `2-${'b'.repeat(32)}`, `1-${'a'.repeat(32)}`];
      const [result] = await storage.writeDocuments('db', [{ id: 'doc', body: { v: 3 }, deleted: false, revPath: path }], { newEdits: false });
      assert.ok(result.ok);
      assert.equal(await storage.readDocument('db', 'doc', { rev: path[1] }), undefined);
      const read = await storage.readDocument('db', 'doc', { revsInfo: true });
      assert.deepEqual(read?.revsInfo?.map((info) => info.status), ['available', 'missing', 'missing']);
    });

    it('latest follows an older revision to the first leaf descending from it', async () => {
      const { storage } = ctx();
      const [rev1, , rev3] = await history(storage);
      const branch = await put(storage, { id: 'doc', body: { branch: true }, deleted: false, baseRev: rev3 });
      const latest = await storage.readDocument('db', 'doc', { rev: rev1, latest: true });
      assert.deepEqual([latest?.rev, latest?.body], [branch, { branch: true }]);
      assert.equal((await storage.readDocument('db', 'doc', { rev: branch, latest: true }))?.rev, branch, 'a leaf is itself');
      await storage.compact('db');
      assert.equal((await storage.readDocument('db', 'doc', { rev: rev1, latest: true }))?.rev, branch, 'still after compaction');
      assert.equal(await storage.readDocument('db', 'doc', { rev: `9-${'f'.repeat(32)}`, latest: true }), undefined);
    });

    it('open_revs opens an older revision while its body is kept', async () => {
      const { storage } = ctx();
      const [rev1] = await history(storage);
      const [before] = await storage.openRevisions('db', [{ id: 'doc', revs: [rev1] }]);
      assert.deepEqual(before.map((item) => ('ok' in item ? item.ok.body : item)), [{ v: 1 }]);
      await storage.compact('db');
      const [after] = await storage.openRevisions('db', [{ id: 'doc', revs: [rev1] }]);
      assert.deepEqual(after, [{ missing: rev1 }]);
    });

    it('compaction reclaims superseded bodies in slices, never a leaf, and counts the bytes', async () => {
      const { storage } = ctx();
      // More superseded bodies than one slice, spread over documents, plus two edits of one
      // document in one batch (its first revision is superseded before it is ever stored as a leaf).
      const edits: DocumentEdit[] = Array.from({ length: COMPACTION_SLICE + 20 }, (_, i) => ({ id: `d${i}`, body: { i }, deleted: false }));
      const firsts = await storage.writeDocuments('db', edits, { newEdits: true });
      await storage.writeDocuments(
        'db',
        firsts.map((first, i) => ({ id: `d${i}`, body: { i, second: true }, deleted: false, baseRev: (first as { rev: string }).rev })),
        { newEdits: true },
      );
      const [inBatch] = await storage.writeDocuments('db', [{ id: 'pair', body: { n: 1 }, deleted: false }], { newEdits: true });
      assert.ok(inBatch.ok);
      const info = await storage.databaseInfo('db');
      assert.ok(info !== undefined && info.compactableSize > 0);
      const leafBytes = info.dataSize;
      assert.equal(await storage.compact('db'), info.compactableSize);
      const after = await storage.databaseInfo('db');
      assert.deepEqual([after?.compactableSize, after?.dataSize], [0, leafBytes]);
      for (const i of [0, COMPACTION_SLICE + 19]) assert.deepEqual((await storage.readDocument('db', `d${i}`))?.body, { i, second: true });
      assert.equal(await storage.compact('db'), 0, 'nothing left');
    });

    it('bodies superseded within one batch are kept too', async () => {
      const { storage } = ctx();
      const first = `1-${'a'.repeat(32)}`;
      const second = `2-${'b'.repeat(32)}`;
      const results = await storage.writeDocuments(
        'db',
        [
          { id: 'doc', body: { v: 1 }, deleted: false, revPath: [first] },
          { id: 'doc', body: { v: 2 }, deleted: false, revPath: [second, first] },
        ],
        { newEdits: false },
      );
      assert.ok(results.every((result) => result.ok));
      assert.deepEqual((await storage.readDocument('db', 'doc', { rev: first }))?.body, { v: 1 });
      assert.equal((await storage.databaseInfo('db'))?.compactableSize, '{"v":1}'.length);
      assert.equal(await storage.compact('db'), '{"v":1}'.length);
    });

    it('writes running during a compaction keep every leaf (the writes supersede, compaction only reclaims)', async () => {
      const { storage } = ctx();
      const count = COMPACTION_SLICE * 2;
      let revs = (await storage.writeDocuments('db', Array.from({ length: count }, (_, i) => ({ id: `d${i}`, body: { i, g: 0 }, deleted: false })), { newEdits: true })).map(
        (result) => (result as { rev: string }).rev,
      );
      const rounds: Promise<unknown>[] = [];
      const compaction = storage.compact('db');
      for (let g = 1; g <= 3; g++) {
        const next = await storage.writeDocuments('db', revs.map((rev, i) => ({ id: `d${i}`, body: { i, g }, deleted: false, baseRev: rev })), { newEdits: true });
        revs = next.map((result) => (result as { rev: string }).rev);
        rounds.push(storage.compact('db'));
      }
      await Promise.all([compaction, ...rounds]);
      await storage.compact('db');
      for (const i of [0, count / 2, count - 1]) assert.deepEqual((await storage.readDocument('db', `d${i}`))?.body, { i, g: 3 });
      const [opened] = await storage.openRevisions('db', [{ id: 'd7', revs: 'all' }]);
      assert.equal(opened.length, 1);
      assert.equal((await storage.databaseInfo('db'))?.compactableSize, 0);
    });

    it('compacting a missing database is a not_found CouchError', async () => {
      const { storage } = ctx();
      await assert.rejects(storage.compact('missing'), (error: unknown) => error instanceof CouchError && error.status === 404);
    });
  });
}
