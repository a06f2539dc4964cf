import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend, OPEN_SECURITY } from '../support/backends.js';
import type { EncodedRow, MappedDocument, Json, Storage, ViewRange } from '../../src/storage/storage.js';
import { encode as encodeKey } from '../../src/collation/encode.js';
import { COLLATION_TABLE } from '../support/collation-table.js';

const row = (view: number, key: Json, value: Json): EncodedRow => ({
  view,
  key: encodeKey(key),
  keyJson: JSON.stringify(key),
  valueJson: JSON.stringify(value),
  num: typeof value === 'number' ? value : null,
});

/** One document per key of CouchDB's collation table, stored in reverse order; view 1 is a second view. */
async function seed(storage: Storage): Promise<void> {
  await storage.views.open('db', 'sig');
  const documents: MappedDocument[] = COLLATION_TABLE.map((key, i) => ({ id: `d${String(i).padStart(2, '0')}`, rows: [row(0, key, i), row(1, i, null)] })).reverse();
  await storage.views.update('db', 'sig', documents, 7);
}

const range = (extra: Partial<ViewRange> = {}): ViewRange => ({ view: 0, inclusiveEnd: true, descending: false, skip: 0, ...extra });

for (const backend of BACKENDS) {
  describe(`${backend.name}: view indexes`, () => {
    const ctx = freshBackend(backend);

    it('keeps rows in CouchDB\'s collation order, both directions, with total_rows', async () => {
      const { storage } = ctx();
      await seed(storage);
      const up = await storage.views.rows('db', 'sig', range());
      assert.deepEqual(up.rows.map((r) => r.key), COLLATION_TABLE);
      assert.equal(up.totalRows, COLLATION_TABLE.length);
      const down = await storage.views.rows('db', 'sig', range({ descending: true }));
      assert.deepEqual(down.rows.map((r) => r.key), [...COLLATION_TABLE].reverse());
    });

    it('answers a range by start and end key, inclusive or not, with offset, skip and limit', async () => {
      const { storage } = ctx();
      await seed(storage);
      const keys = async (extra: Partial<ViewRange>): Promise<Json[]> => (await storage.views.rows('db', 'sig', range(extra))).rows.map((r) => r.key);
      assert.deepEqual(await keys({ startKey: encodeKey('a'), endKey: encodeKey('b') }), ['a', 'A', 'aa', 'b']);
      assert.deepEqual(await keys({ startKey: encodeKey('a'), endKey: encodeKey('b'), inclusiveEnd: false }), ['a', 'A', 'aa']);
      assert.deepEqual(await keys({ startKey: encodeKey('b'), endKey: encodeKey('a'), descending: true }), ['b', 'aa', 'A', 'a']);
      assert.deepEqual(await keys({ startKey: encodeKey('b'), endKey: encodeKey('a'), descending: true, inclusiveEnd: false }), ['b', 'aa', 'A']);
      const page = await storage.views.rows('db', 'sig', range({ startKey: encodeKey('a'), skip: 1, limit: 2 }));
      assert.deepEqual(page.rows.map((r) => r.key), ['A', 'aa']);
      assert.equal(page.offset, COLLATION_TABLE.indexOf('a') + 1);
    });

    it('bounds by document id within a key (startkey_docid, endkey_docid)', async () => {
      const { storage } = ctx();
      await storage.views.open('db', 'sig');
      await storage.views.update('db', 'sig', ['a', 'b', 'c', 'd'].map((id) => ({ id, rows: [row(0, 'k', id)] })), 4);
      const ids = async (extra: Partial<ViewRange>): Promise<string[]> => (await storage.views.rows('db', 'sig', range(extra))).rows.map((r) => r.id);
      assert.deepEqual(await ids({ startKey: encodeKey('k'), startDocId: 'b', endKey: encodeKey('k'), endDocId: 'c' }), ['b', 'c']);
      assert.deepEqual(await ids({ startKey: encodeKey('k'), startDocId: 'c', endKey: encodeKey('k'), endDocId: 'a', descending: true }), ['c', 'b', 'a']);
      assert.deepEqual(await ids({ startKey: encodeKey('k'), startDocId: 'b', endKey: encodeKey('k'), endDocId: 'd', inclusiveEnd: false }), ['b', 'c']);
    });

    it('replaces a document\'s rows at each update and records the sequence reached, across a restart', async () => {
      const opened = ctx();
      await seed(opened.storage);
      await opened.storage.views.update('db', 'sig', [{ id: 'd00', rows: [row(0, 'zz', 1)] }, { id: 'd01', rows: [] }], 9);
      const storage = await opened.reopen();
      assert.equal(await storage.views.open('db', 'sig'), 9);
      const all = await storage.views.rows('db', 'sig', range());
      assert.equal(all.totalRows, COLLATION_TABLE.length - 1);
      assert.deepEqual(all.rows.filter((r) => r.id === 'd00').map((r) => r.key), ['zz']);
      assert.equal(all.rows.filter((r) => r.id === 'd01').length, 0);
    });

    it('aggregates numbers of a range in SQL for the built-in reduces', async () => {
      const { storage } = ctx();
      await seed(storage);
      const [sum] = await storage.views.aggregate('db', 'sig', range({ startKey: encodeKey(1), endKey: encodeKey(4) }));
      assert.deepEqual(sum, { count: 4, numbers: 4, sum: 7 + 8 + 9 + 10, min: 7, max: 10, sumsqr: 49 + 64 + 81 + 100 });
      const groups = await storage.views.aggregate('db', 'sig', range({ startKey: encodeKey(1), endKey: encodeKey(4), descending: false, skip: 1, limit: 2 }), true);
      assert.deepEqual(groups.map((group) => [group.key, group.count, group.sum]), [[2, 1, 8], [3.0, 1, 9]]);
      const down = await storage.views.aggregate('db', 'sig', range({ startKey: encodeKey('b'), endKey: encodeKey('a'), descending: true }), true);
      assert.deepEqual(down.map((group) => group.key), ['b', 'aa', 'A', 'a']);
      const [none] = await storage.views.aggregate('db', 'sig', range({ view: 1 }));
      assert.equal(none!.count, COLLATION_TABLE.length);
      assert.equal(none!.numbers, 0);
    });

    it('lists and drops indexes; deleting the database drops its indexes', async () => {
      const { storage } = ctx();
      await seed(storage);
      await storage.views.open('db', 'other');
      assert.deepEqual((await storage.views.list('db')).map((index) => [index.signature, index.updateSeq, index.rows]), [['other', 0, 0], ['sig', 7, COLLATION_TABLE.length * 2]]);
      assert.equal(await storage.views.drop('db', ['other', 'missing']), 1);
      assert.deepEqual((await storage.views.list('db')).map((index) => index.signature), ['sig']);
      await storage.deleteDatabase('db');
      await storage.createDatabase('db', OPEN_SECURITY);
      assert.deepEqual(await storage.views.list('db'), []);
      assert.equal(await storage.views.open('db', 'sig'), 0);
    });

    it('runs one updater of an index at a time', async () => {
      const { storage } = ctx();
      await storage.views.open('db', 'sig');
      const events: string[] = [];
      const work = (name: string) => async (): Promise<void> => {
        events.push(`${name} in`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        events.push(`${name} out`);
      };
      await Promise.all([storage.views.exclusive('db', 'sig', work('a')), storage.views.exclusive('db', 'sig', work('b'))]);
      assert.deepEqual(events, ['a in', 'a out', 'b in', 'b out']);
    });
  });
}
