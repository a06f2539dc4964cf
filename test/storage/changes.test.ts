import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend } from '../support/backends.js';
import type { ChangeRow, DocumentEdit, Storage } from '../../src/storage/storage.js';

async function write(storage: Storage, edit: DocumentEdit): Promise<string> {
  const [result] = await storage.writeDocuments('db', [edit], { newEdits: true });
  assert.ok(result.ok, `expected ${edit.id} to be written`);
  return result.rev;
}

const brief = (rows: ChangeRow[]) => rows.map((row) => [row.seq, row.id]);

for (const backend of BACKENDS) {
  describe(`${backend.name}: changes`, () => {
    const ctx = freshBackend(backend);

    it('lists one row per document at its latest sequence, in order', async () => {
      const { storage } = ctx();
      const a1 = await write(storage, { id: 'a', body: { v: 1 }, deleted: false }); // 1
      const b1 = await write(storage, { id: 'b', body: { v: 1 }, deleted: false }); // 2
      const a2 = await write(storage, { id: 'a', body: { v: 2 }, deleted: false, baseRev: a1 }); // 3
      const c1 = await write(storage, { id: 'c', body: { v: 1 }, deleted: false }); // 4
      const c2 = await write(storage, { id: 'c', body: {}, deleted: true, baseRev: c1 }); // 5
      await storage.putLocal('db', '_local/checkpoint', { seq: 5 }, undefined);
      const rows = await storage.changes('db', {});
      assert.deepEqual(rows, [
        { seq: 2, id: 'b', changes: [b1], deleted: false },
        { seq: 3, id: 'a', changes: [a2], deleted: false },
        { seq: 5, id: 'c', changes: [c2], deleted: true },
      ]);
      assert.equal((await storage.databaseInfo('db'))?.updateSeq, 5, 'local documents take no sequence');
    });

    it('starts after `since`, stops at `limit`, and runs backwards when descending', async () => {
      const { storage } = ctx();
      for (const id of ['a', 'b', 'c', 'd', 'e']) await write(storage, { id, body: {}, deleted: false });
      assert.deepEqual(brief(await storage.changes('db', { since: 2 })), [
        [3, 'c'],
        [4, 'd'],
        [5, 'e'],
      ]);
      assert.deepEqual(brief(await storage.changes('db', { since: 1, limit: 2 })), [
        [2, 'b'],
        [3, 'c'],
      ]);
      assert.deepEqual(brief(await storage.changes('db', { since: 5 })), []);
      assert.deepEqual(brief(await storage.changes('db', { descending: true, limit: 2 })), [
        [5, 'e'],
        [4, 'd'],
      ]);
      assert.deepEqual(brief(await storage.changes('db', { limit: 0 })), []);
    });

    it('includes bodies when asked, tombstones too', async () => {
      const { storage } = ctx();
      const a1 = await write(storage, { id: 'a', body: { v: 1 }, deleted: false });
      await write(storage, { id: 'b', body: { v: 'b' }, deleted: false });
      await write(storage, { id: 'a', body: { reason: 'gone' }, deleted: true, baseRev: a1 });
      const rows = await storage.changes('db', { includeDocs: true });
      assert.deepEqual(
        rows.map((row) => [row.id, row.deleted, row.body]),
        [
          ['b', false, { v: 'b' }],
          ['a', true, { reason: 'gone' }],
        ],
      );
      assert.ok((await storage.changes('db', {})).every((row) => row.body === undefined));
    });

    it('lists every leaf, winner first, with style=all_docs', async () => {
      const { storage } = ctx();
      const a1 = `1-${'a'.repeat(32)}`;
      const b2 = `2-${'b'.repeat(32)}`;
      const c2 = `2-${'c'.repeat(32)}`;
      const f2 = `2-${'f'.repeat(32)}`;
      const write2 = (revPath: string[], deleted = false) =>
        storage.writeDocuments('db', [{ id: 'doc', body: {}, deleted, revPath }], { newEdits: false });
      await write2([b2, a1]);
      await write2([f2, a1], true);
      await write2([c2, a1]);
      const [all] = await storage.changes('db', { allLeaves: true });
      assert.deepEqual(all.changes, [c2, b2, f2]);
      assert.equal(all.seq, 3);
      const [winnerOnly] = await storage.changes('db', {});
      assert.deepEqual(winnerOnly.changes, [c2]);
    });
  });
}
