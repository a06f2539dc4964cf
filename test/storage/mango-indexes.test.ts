import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend, OPEN_SECURITY } from '../support/backends.js';
import type { Storage } from '../../src/storage/storage.js';

const key = (...bytes: number[]) => Uint8Array.from(bytes);
const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

async function writeDocs(storage: Storage, names: string[]): Promise<void> {
  await storage.writeDocuments('db', names.map((id) => ({ id, body: { name: id }, deleted: false })), { newEdits: true });
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: Mango index rows`, () => {
    const ctx = freshBackend(backend);

    it('starts at sequence 0 and moves only from the sequence it is at', async () => {
      const { indexes } = ctx().storage;
      assert.equal(await indexes.indexedSeq('db', 'sig'), 0);
      assert.equal(await indexes.applyUpdates('db', 'sig', 0, 3, []), true);
      assert.equal(await indexes.indexedSeq('db', 'sig'), 3);
      assert.equal(await indexes.applyUpdates('db', 'sig', 0, 5, [{ id: 'a', key: key(1) }]), false, 'stale updater');
      assert.equal(await indexes.indexedSeq('db', 'sig'), 3);
      assert.equal(await indexes.indexedSeq('db', 'other'), 0, 'per signature');
    });

    it('scans live documents in (key, id) byte order within bounds, both ways, after a position', async () => {
      const { storage } = ctx();
      await writeDocs(storage, ['a', 'b', 'c', 'd']);
      const rows = [
        { id: 'a', key: key(0x35, 0x80) },
        { id: 'b', key: key(0x35, 0x01) },
        { id: 'c', key: key(0x35, 0x01) },
        { id: 'd', key: key(0x36) },
      ];
      assert.equal(await storage.indexes.applyUpdates('db', 'sig', 0, 4, rows), true);
      const all = await storage.indexes.scan('db', 'sig', { descending: false, limit: 10 });
      assert.deepEqual(ids(all), ['b', 'c', 'a', 'd']);
      assert.deepEqual(all[0]!.body, { name: 'b' });
      assert.match(all[0]!.rev, /^1-/);
      assert.deepEqual(Array.from(all[0]!.key), [0x35, 0x01]);
      assert.deepEqual(ids(await storage.indexes.scan('db', 'sig', { descending: true, limit: 10 })), ['d', 'a', 'c', 'b']);
      assert.deepEqual(ids(await storage.indexes.scan('db', 'sig', { gte: key(0x35, 0x02), lt: key(0x36), descending: false, limit: 10 })), ['a']);
      assert.deepEqual(ids(await storage.indexes.scan('db', 'sig', { after: { key: key(0x35, 0x01), id: 'b' }, descending: false, limit: 2 })), ['c', 'a']);
      assert.deepEqual(ids(await storage.indexes.scan('db', 'sig', { after: { key: key(0x35, 0x80), id: 'a' }, descending: true, limit: 10 })), ['c', 'b']);
    });

    it('replaces the row of an updated id, removes a dropped one, and never lists deleted documents', async () => {
      const { storage } = ctx();
      await writeDocs(storage, ['a', 'b', 'c']);
      await storage.indexes.applyUpdates('db', 'sig', 0, 3, [
        { id: 'a', key: key(1) },
        { id: 'b', key: key(2) },
        { id: 'c', key: key(3) },
      ]);
      await storage.indexes.applyUpdates('db', 'sig', 3, 4, [
        { id: 'a', key: key(9) },
        { id: 'b', key: undefined },
      ]);
      assert.deepEqual(ids(await storage.indexes.scan('db', 'sig', { descending: false, limit: 10 })), ['c', 'a']);
      const current = await storage.readDocument('db', 'c');
      await storage.writeDocuments('db', [{ id: 'c', body: {}, deleted: true, baseRev: current!.rev }], { newEdits: true });
      assert.deepEqual(ids(await storage.indexes.scan('db', 'sig', { descending: false, limit: 10 })), ['a'], 'joined with live documents');
    });

    it('forgets an index on drop, and every index with its database', async () => {
      const { storage } = ctx();
      await writeDocs(storage, ['a']);
      await storage.indexes.applyUpdates('db', 'sig', 0, 1, [{ id: 'a', key: key(1) }]);
      await storage.indexes.drop('db', 'sig');
      assert.equal(await storage.indexes.indexedSeq('db', 'sig'), 0);
      assert.deepEqual(await storage.indexes.scan('db', 'sig', { descending: false, limit: 10 }), []);
      await storage.indexes.applyUpdates('db', 'sig', 0, 1, [{ id: 'a', key: key(1) }]);
      await storage.deleteDatabase('db');
      await assert.rejects(storage.indexes.indexedSeq('db', 'sig'), { status: 404 });
      await storage.createDatabase('db', OPEN_SECURITY);
      assert.equal(await storage.indexes.indexedSeq('db', 'sig'), 0, 'a new database starts without index state');
    });

    it('lets one of two concurrent updaters from the same sequence win', async () => {
      const { storage } = ctx();
      await writeDocs(storage, ['a', 'b']);
      const results = await Promise.all([
        storage.indexes.applyUpdates('db', 'sig', 0, 2, [{ id: 'a', key: key(1) }, { id: 'b', key: key(2) }]),
        storage.indexes.applyUpdates('db', 'sig', 0, 2, [{ id: 'a', key: key(1) }, { id: 'b', key: key(2) }]),
      ]);
      assert.deepEqual(results.sort(), [false, true]);
      assert.deepEqual(ids(await storage.indexes.scan('db', 'sig', { descending: false, limit: 10 })), ['a', 'b']);
    });
  });
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: listing without counting the offset`, () => {
    const ctx = freshBackend(backend);

    it('lists the same rows with countOffset false, in pages, both ways', async () => {
      const { storage } = ctx();
      await writeDocs(storage, ['a', 'b', 'c', 'd']);
      const page = await storage.listDocuments('db', { startKey: 'b', limit: 2, countOffset: false });
      assert.deepEqual(ids(page.rows), ['b', 'c']);
      const counted = await storage.listDocuments('db', { startKey: 'b', limit: 2 });
      assert.deepEqual([ids(counted.rows), counted.offset], [['b', 'c'], 1]);
      assert.deepEqual(ids((await storage.listDocuments('db', { startKey: 'c', descending: true, countOffset: false })).rows), ['c', 'b', 'a']);
    });
  });
}
