import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend } from '../support/backends.js';
import { CouchError } from '../../src/errors/couch-error.js';
import type { DocumentEdit, EditResult, JsonObject, Storage } from '../../src/storage/storage.js';

// Hand-made revisions as a replication peer would send them (32 hex digits each).
const r = (generation: number, digit: string): string => `${generation}-${digit.repeat(32)}`;
const A1 = r(1, 'a');
const B2 = r(2, 'b');
const C2 = r(2, 'c');
const D3 = r(3, 'd');
const E3 = r(3, 'e');

async function replicate(
  storage: Storage,
  id: string,
  revPath: string[],
  body: JsonObject,
  deleted = false,
): Promise<EditResult> {
  const [result] = await storage.writeDocuments('db', [{ id, body, deleted, revPath }], { newEdits: false });
  return result;
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: replicated edits (new_edits=false)`, () => {
    const ctx = freshBackend(backend);

    it('stores a replicated path as given', async () => {
      const { storage } = ctx();
      assert.deepEqual(await replicate(storage, 'doc', [D3, B2, A1], { v: 3 }), { ok: true, id: 'doc', rev: D3 });
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.rev, D3);
      assert.deepEqual(doc?.body, { v: 3 });
      assert.deepEqual(doc?.revisionPath, ['d'.repeat(32), 'b'.repeat(32), 'a'.repeat(32)]);
      assert.equal(doc?.revisionStart, 3);
      assert.equal(doc?.seq, 1);
    });

    for (const order of [
      [B2, C2],
      [C2, B2],
    ]) {
      it(`picks CouchDB's winner whatever the arrival order (${order.map((x) => x[2]).join(' then ')})`, async () => {
        const { storage } = ctx();
        for (const rev of order) await replicate(storage, 'doc', [rev, A1], { from: rev });
        const doc = await storage.readDocument('db', 'doc');
        assert.equal(doc?.rev, C2, 'same generation: the highest hash wins');
        assert.deepEqual(doc?.body, { from: C2 });
        assert.deepEqual(doc?.conflicts, [B2]);
        assert.deepEqual(doc?.deletedConflicts, []);
        assert.equal((await storage.databaseInfo('db'))?.docCount, 1);
      });
    }

    it('prefers the longer branch, then live over deleted', async () => {
      const { storage } = ctx();
      await replicate(storage, 'doc', [C2, A1], { v: 'c' });
      await replicate(storage, 'doc', [D3, B2, A1], { v: 'd' });
      assert.equal((await storage.readDocument('db', 'doc'))?.rev, D3);
      await replicate(storage, 'doc', [r(4, 'f'), D3], {}, true);
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.rev, C2, 'a live leaf beats a longer deleted one');
      assert.deepEqual(doc?.conflicts, []);
      assert.deepEqual(doc?.deletedConflicts, [r(4, 'f')]);
    });

    it('lists conflicts and deleted conflicts in winner order', async () => {
      const { storage } = ctx();
      for (const digit of ['1', '5', '3']) await replicate(storage, 'doc', [r(2, digit), A1], {});
      for (const digit of ['2', '4']) await replicate(storage, 'doc', [r(2, digit), A1], {}, true);
      await replicate(storage, 'doc', [E3, r(2, '0'), A1], {});
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.rev, E3);
      assert.deepEqual(doc?.conflicts, [r(2, '5'), r(2, '3'), r(2, '1')]);
      assert.deepEqual(doc?.deletedConflicts, [r(2, '4'), r(2, '2')]);
    });

    it('makes the other branch win when the winning branch is deleted', async () => {
      const { storage } = ctx();
      await replicate(storage, 'doc', [B2, A1], { v: 'b' });
      await replicate(storage, 'doc', [C2, A1], { v: 'c' });
      const [deleted] = await storage.writeDocuments('db', [{ id: 'doc', body: {}, deleted: true, baseRev: C2 }], {
        newEdits: true,
      });
      assert.ok(deleted.ok && deleted.rev.startsWith('3-'));
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.rev, B2);
      assert.equal(doc?.deleted, false);
      assert.deepEqual(doc?.body, { v: 'b' });
      assert.deepEqual(doc?.conflicts, []);
      assert.deepEqual(doc?.deletedConflicts, [deleted.rev]);
      const info = await storage.databaseInfo('db');
      assert.equal(info?.docCount, 1);
      assert.equal(info?.deletedDocCount, 0);
    });

    it('resolves a conflict by editing the losing branch', async () => {
      const { storage } = ctx();
      await replicate(storage, 'doc', [B2, A1], { v: 'b' });
      await replicate(storage, 'doc', [C2, A1], { v: 'c' });
      assert.deepEqual((await storage.readDocument('db', 'doc', { rev: B2 }))?.body, { v: 'b' });
      const [edited] = await storage.writeDocuments('db', [{ id: 'doc', body: { v: 'b2' }, deleted: false, baseRev: B2 }], {
        newEdits: true,
      });
      assert.ok(edited.ok && edited.rev.startsWith('3-'));
      const [removed] = await storage.writeDocuments('db', [{ id: 'doc', body: {}, deleted: true, baseRev: C2 }], {
        newEdits: true,
      });
      assert.ok(removed.ok);
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.rev, edited.rev);
      assert.deepEqual(doc?.conflicts, []);
      assert.deepEqual(doc?.deletedConflicts, [removed.rev]);
      assert.deepEqual((await storage.readDocument('db', 'doc', { rev: B2 }))?.body, { v: 'b' }, 'kept until compaction');
      await storage.compact('db');
      assert.equal(await storage.readDocument('db', 'doc', { rev: B2 }), undefined, 'compacted');
    });

    it('treats a path that is already known as a no-op', async () => {
      const { storage } = ctx();
      await replicate(storage, 'doc', [D3, B2, A1], { v: 'd' });
      const seq = (await storage.databaseInfo('db'))?.updateSeq;
      assert.deepEqual(await replicate(storage, 'doc', [D3, B2, A1], { v: 'changed' }), { ok: true, id: 'doc', rev: D3 });
      assert.deepEqual(await replicate(storage, 'doc', [B2, A1], { v: 'ancestor' }), { ok: true, id: 'doc', rev: B2 });
      const doc = await storage.readDocument('db', 'doc');
      assert.deepEqual(doc?.body, { v: 'd' });
      assert.deepEqual(doc?.conflicts, []);
      assert.equal((await storage.databaseInfo('db'))?.updateSeq, seq);
      assert.equal((await storage.changes('db', {}))[0].seq, seq);
    });

    it('extends a branch, keeping the old leaf body until compaction', async () => {
      const { storage } = ctx();
      await replicate(storage, 'doc', [B2, A1], { v: 'b' });
      const before = (await storage.databaseInfo('db'))?.dataSize ?? 0;
      await replicate(storage, 'doc', [E3, B2], { v: 'e' });
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.rev, E3);
      assert.deepEqual(doc?.revisionPath, ['e', 'b', 'a'].map((x) => x.repeat(32)));
      assert.deepEqual((await storage.readDocument('db', 'doc', { rev: B2 }))?.body, { v: 'b' });
      assert.equal((await storage.databaseInfo('db'))?.dataSize, before, 'sizes count leaves');
      assert.equal((await storage.databaseInfo('db'))?.compactableSize, before);
      assert.equal(await storage.compact('db'), before);
      assert.equal(await storage.readDocument('db', 'doc', { rev: B2 }), undefined);
      assert.equal((await storage.databaseInfo('db'))?.compactableSize, 0);
    });

    it('stores a replicated deletion as a tombstone', async () => {
      const { storage } = ctx();
      await replicate(storage, 'doc', [B2, A1], {}, true);
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.deleted, true);
      assert.equal(doc?.rev, B2);
      const info = await storage.databaseInfo('db');
      assert.equal(info?.docCount, 0);
      assert.equal(info?.deletedDocCount, 1);
    });

    it('stems histories longer than 1000 revisions', async () => {
      const { storage } = ctx();
      const path = Array.from({ length: 1005 }, (_, i) => `${1005 - i}-${(1005 - i).toString(16).padStart(32, '0')}`);
      await replicate(storage, 'doc', path, { long: true });
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.revisionStart, 1005);
      assert.equal(doc?.revisionPath.length, 1000);
      assert.equal(doc?.revisionPath[999], (6).toString(16).padStart(32, '0'));
    });

    it('refuses a missing or malformed path with bad_request', async () => {
      const { storage } = ctx();
      const isBadRequest = (error: unknown) =>
        error instanceof CouchError && error.status === 400 && error.error === 'bad_request';
      for (const revPath of [undefined, [], ['x'], [D3, A1], [A1, B2]]) {
        await assert.rejects(
          storage.writeDocuments('db', [{ id: 'doc', body: {}, deleted: false, revPath }], { newEdits: false }),
          isBadRequest,
          JSON.stringify(revPath),
        );
      }
      assert.equal(await storage.readDocument('db', 'doc'), undefined);
    });

    it('refuses generation 0, NUL and lone surrogates in replicated revisions with bad_request', async () => {
      const { storage } = ctx();
      for (const revPath of [['0-a'], ['1-a\u0000'], ['2-\ud800', A1]]) {
        await assert.rejects(
          storage.writeDocuments('db', [{ id: 'doc', body: {}, deleted: false, revPath }], { newEdits: false }),
          (error: unknown) => error instanceof CouchError && error.status === 400,
          JSON.stringify(revPath),
        );
      }
      assert.equal(await storage.readDocument('db', 'doc'), undefined);
    });

    it('stores revision ids that are not hex (2-x, 1-, é) and picks the winner by CouchDB\'s byte order', async () => {
      const { storage } = ctx();
      const md5 = `2-a${'0'.repeat(31)}`;
      for (const path of [['2-x', '1-'], ['2-b', '1-'], [md5, '1-'], ['2-\u{10000}', '1-'], ['2-\uffff', '1-']]) {
        assert.equal((await replicate(storage, 'doc', path, { from: path[0] })).ok, true, path[0]);
      }
      const doc = await storage.readDocument('db', 'doc');
      // An MD5 id counts as its 16 bytes (0xa0 …), any other as UTF-8: U+10000 (F0 …) is above
      // U+FFFF (EF …), which is above 'x'.
      assert.equal(doc?.rev, '2-\u{10000}');
      assert.deepEqual(doc?.conflicts, ['2-\uffff', md5, '2-x', '2-b']);
      assert.deepEqual([doc?.revisionStart, doc?.revisionPath], [2, ['\u{10000}', '']]);
      assert.deepEqual((await storage.readDocument('db', 'doc', { rev: '2-x' }))?.body, { from: '2-x' });
    });

    it('refuses replicated revisions beyond the leaf limit with too_large, keeping the others', async () => {
      const { storage } = ctx();
      const revs = ['a', 'b', 'c', 'd', 'e'].map((digit) => r(1, digit));
      const results = await storage.writeDocuments(
        'db',
        revs.map((rev) => ({ id: 'doc', body: { rev }, deleted: false, revPath: [rev] })),
        { newEdits: false, limits: { maxLeaves: 3, maxRevisions: 100 } },
      );
      assert.deepEqual(results.map((result) => (result.ok ? 'ok' : result.error)), ['ok', 'ok', 'ok', 'too_large', 'too_large']);
      const refused = results[3]!;
      assert.ok(!refused.ok && /more than 3 leaf revisions/.test(refused.reason));
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.rev, revs[2]);
      assert.deepEqual(doc?.conflicts, [revs[1], revs[0]]);
      assert.equal((await storage.databaseInfo('db'))?.updateSeq, 3, 'a refused revision takes no sequence');
      const extended = await storage.writeDocuments('db', [{ id: 'doc', body: {}, deleted: false, revPath: [r(2, 'f'), revs[0]!] }], {
        newEdits: false,
        limits: { maxLeaves: 3, maxRevisions: 100 },
      });
      assert.deepEqual(extended, [{ ok: true, id: 'doc', rev: r(2, 'f') }], 'extending a leaf adds none');
    });

    it('refuses a replicated path that would keep more revisions than allowed', async () => {
      const { storage } = ctx();
      const limits = { maxLeaves: 10, maxRevisions: 4 };
      const [first] = await storage.writeDocuments('db', [{ id: 'doc', body: {}, deleted: false, revPath: [D3, B2, A1] }], { newEdits: false, limits });
      assert.equal(first?.ok, true);
      const [second] = await storage.writeDocuments('db', [{ id: 'doc', body: {}, deleted: false, revPath: [E3, C2] }], { newEdits: false, limits });
      assert.equal(second?.ok, false);
      assert.ok(!second!.ok && second!.error === 'too_large' && /more than 4 revisions/.test(second!.reason));
      assert.deepEqual((await storage.readDocument('db', 'doc'))?.conflicts, []);
    });

    it('writes a batch larger than one transaction slice in order, each edit seeing the earlier ones', async () => {
      const { storage } = ctx();
      // 700 edits: several slices; `chain` is extended in the first slice and again in the last.
      const edits: DocumentEdit[] = Array.from({ length: 700 }, (_, i) => ({ id: `d${i}`, body: { i }, deleted: false, revPath: [r(1, 'a')] }));
      edits[0] = { id: 'chain', body: { v: 1 }, deleted: false, revPath: [A1] };
      edits[699] = { id: 'chain', body: { v: 2 }, deleted: false, revPath: [B2, A1] };
      const results = await storage.writeDocuments('db', edits, { newEdits: false });
      assert.deepEqual(results.map((result) => result.id), edits.map((edit) => edit.id));
      assert.ok(results.every((result) => result.ok));
      const info = await storage.databaseInfo('db');
      assert.equal(info?.updateSeq, 700);
      assert.equal(info?.docCount, 699);
      const chain = await storage.readDocument('db', 'chain');
      assert.deepEqual([chain?.rev, chain?.body, chain?.seq], [B2, { v: 2 }, 700]);
      assert.deepEqual((await storage.readDocument('db', 'chain', { rev: A1 }))?.body, { v: 1 }, 'the first slice\'s leaf body is kept');
    });
  });
}
