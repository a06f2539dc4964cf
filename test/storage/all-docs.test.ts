import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend } from '../support/backends.js';
import type { RangeOptions, Storage } from '../../src/storage/storage.js';

/** Live documents a..e plus `_design/app`, a deleted `bb` and a local document. */
async function seed(storage: Storage): Promise<Map<string, string>> {
  const revs = new Map<string, string>();
  const ids = ['c', 'a', 'e', '_design/app', 'bb', 'b', 'd'];
  const results = await storage.writeDocuments(
    'db',
    ids.map((id) => ({ id, body: { name: id }, deleted: false })),
    { newEdits: true },
  );
  for (const result of results) {
    assert.ok(result.ok);
    revs.set(result.id, result.rev);
  }
  const [deleted] = await storage.writeDocuments('db', [{ id: 'bb', body: {}, deleted: true, baseRev: revs.get('bb') }], {
    newEdits: true,
  });
  assert.ok(deleted.ok);
  revs.set('bb', deleted.rev);
  await storage.putLocal('db', '_local/x', { local: true }, undefined);
  return revs;
}

const ALL = ['_design/app', 'a', 'b', 'c', 'd', 'e'];

for (const backend of BACKENDS) {
  describe(`${backend.name}: listDocuments and lookupDocuments`, () => {
    const ctx = freshBackend(backend);

    it('lists live documents (design ones too) in id order', async () => {
      const { storage } = ctx();
      const revs = await seed(storage);
      const result = await storage.listDocuments('db', {});
      assert.equal(result.totalRows, 6);
      assert.equal(result.offset, 0);
      assert.deepEqual(
        result.rows.map((row) => ({ ...row })),
        ALL.map((id) => ({ id, rev: revs.get(id), deleted: false, seq: result.rows.find((r) => r.id === id)?.seq })),
      );
      assert.ok(result.rows.every((row) => row.body === undefined));
      const seqs = new Set(result.rows.map((row) => row.seq));
      assert.equal(seqs.size, 6, 'every row carries its own sequence');
    });

    it('orders ids by bytes, not by UTF-16 units or locale', async () => {
      const { storage } = ctx();
      const ids = ['a', 'B', 'é', 'z', '中', '\uff5a', '😀', 'Z', '_a', '0'];
      await storage.writeDocuments('db', ids.map((id) => ({ id, body: {}, deleted: false })), { newEdits: true });
      const sorted = [...ids].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      assert.deepEqual(sorted, ['0', 'B', 'Z', '_a', 'a', 'z', 'é', '中', '\uff5a', '😀']);
      assert.deepEqual((await storage.listDocuments('db', {})).rows.map((r) => r.id), sorted);
      assert.deepEqual((await storage.listDocuments('db', { descending: true })).rows.map((r) => r.id), [...sorted].reverse());
      const range = await storage.listDocuments('db', { startKey: '\uff5a', endKey: '😀' });
      assert.deepEqual(range.rows.map((r) => r.id), ['\uff5a', '😀']);
      assert.equal(range.offset, 8);
    });

    const cases: { name: string; options: RangeOptions; ids: string[]; offset: number }[] = [
      { name: 'start and end keys are inclusive', options: { startKey: 'b', endKey: 'd' }, ids: ['b', 'c', 'd'], offset: 2 },
      { name: 'keys need not exist', options: { startKey: 'b0', endKey: 'c5' }, ids: ['c'], offset: 3 },
      { name: 'inclusiveEnd=false excludes the end key', options: { startKey: 'b', endKey: 'd', inclusiveEnd: false }, ids: ['b', 'c'], offset: 2 },
      { name: 'start key only', options: { startKey: 'd' }, ids: ['d', 'e'], offset: 4 },
      { name: 'end key only', options: { endKey: 'a' }, ids: ['_design/app', 'a'], offset: 0 },
      { name: 'descending', options: { descending: true }, ids: [...ALL].reverse(), offset: 0 },
      {
        name: 'descending: the start key is the upper bound',
        options: { descending: true, startKey: 'd', endKey: 'b' },
        ids: ['d', 'c', 'b'],
        offset: 1,
      },
      {
        name: 'descending with inclusiveEnd=false',
        options: { descending: true, startKey: 'd', endKey: 'b', inclusiveEnd: false },
        ids: ['d', 'c'],
        offset: 1,
      },
      { name: 'descending from a missing key', options: { descending: true, startKey: 'c5' }, ids: ['c', 'b', 'a', '_design/app'], offset: 2 },
      { name: 'limit', options: { limit: 2 }, ids: ['_design/app', 'a'], offset: 0 },
      { name: 'skip counts in the offset', options: { skip: 2, limit: 2 }, ids: ['b', 'c'], offset: 2 },
      { name: 'skip after a start key', options: { startKey: 'b', skip: 1 }, ids: ['c', 'd', 'e'], offset: 3 },
      { name: 'descending skip and limit', options: { descending: true, skip: 1, limit: 3 }, ids: ['d', 'c', 'b'], offset: 1 },
      { name: 'limit 0', options: { startKey: 'c', limit: 0 }, ids: [], offset: 3 },
      { name: 'start key after every id', options: { startKey: 'zzz' }, ids: [], offset: 6 },
      { name: 'skip past the range', options: { startKey: 'b', endKey: 'c', skip: 10 }, ids: [], offset: 4 },
      { name: 'empty range', options: { startKey: 'c1', endKey: 'c2' }, ids: [], offset: 4 },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const { storage } = ctx();
        await seed(storage);
        const result = await storage.listDocuments('db', c.options);
        assert.deepEqual(result.rows.map((row) => row.id), c.ids);
        assert.equal(result.offset, c.offset, 'offset');
        assert.equal(result.totalRows, 6, 'totalRows');
      });
    }

    it('includes the winning bodies when asked', async () => {
      const { storage } = ctx();
      const revs = await seed(storage);
      const [updated] = await storage.writeDocuments('db', [{ id: 'a', body: { name: 'a', v: 2 }, deleted: false, baseRev: revs.get('a') }], {
        newEdits: true,
      });
      assert.ok(updated.ok);
      const result = await storage.listDocuments('db', { includeDocs: true, startKey: 'a', endKey: 'b' });
      assert.deepEqual(
        result.rows.map((row) => [row.id, row.rev, row.body]),
        [
          ['a', updated.rev, { name: 'a', v: 2 }],
          ['b', revs.get('b'), { name: 'b' }],
        ],
      );
    });

    it('looks ids up in the given order, deleted ones included', async () => {
      const { storage } = ctx();
      const revs = await seed(storage);
      const rows = await storage.lookupDocuments('db', ['e', 'missing', 'bb', '_local/x', 'a', 'e'], false);
      assert.equal(rows.length, 6);
      assert.deepEqual(
        rows.map((row) => row && { id: row.id, rev: row.rev, deleted: row.deleted, body: row.body }),
        [
          { id: 'e', rev: revs.get('e'), deleted: false, body: undefined },
          undefined,
          { id: 'bb', rev: revs.get('bb'), deleted: true, body: undefined },
          undefined,
          { id: 'a', rev: revs.get('a'), deleted: false, body: undefined },
          { id: 'e', rev: revs.get('e'), deleted: false, body: undefined },
        ],
      );
      assert.ok(rows.every((row) => row === undefined || typeof row.seq === 'number'));
      const withDocs = await storage.lookupDocuments('db', ['a', 'bb'], true);
      assert.deepEqual(withDocs[0]?.body, { name: 'a' });
      assert.equal(withDocs[1]?.deleted, true);
      assert.equal(withDocs[1]?.body, undefined, 'no body for a deleted document');
    });

    it('counts only live documents in totalRows', async () => {
      const { storage } = ctx();
      await seed(storage);
      const result = await storage.listDocuments('db', { limit: 1 });
      assert.equal(result.totalRows, 6);
      assert.equal(result.rows.length, 1);
      assert.equal((await storage.databaseInfo('db'))?.docCount, 6);
    });
  });
}
