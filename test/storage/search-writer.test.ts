/**
 * The SQLite search writer (src/storage/sqlite/sqlite-search-writer.ts): batches are stored by a
 * thread with its own connection to the file, beside the write queue's own transactions.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { SearchDocument } from '../../src/storage/storage.js';
import { BACKENDS, freshBackend } from '../support/backends.js';

const doc = (id: string, text: string): SearchDocument => ({ id, fields: [{ type: 'text', name: 't', value: text, store: false, analyzer: 'standard' }, { type: 'double', name: 'n', value: 1, store: true }] });
const ALL = { plan: { kind: 'all' } as const, sort: [{ by: 'id' as const, descending: false }], limit: 100_000, topN: 10 };

for (const backend of BACKENDS.filter((candidate) => candidate.name === 'sqlite')) {
  describe('the SQLite search writer thread', () => {
    const ctx = freshBackend(backend);

    it('a batch it cannot store fails its caller with the reason, and the next batch is stored', async () => {
      const { search } = ctx().storage;
      await search.open('db', 'sig');
      const raw = new Database(ctx().file!);
      const id = raw.prepare('SELECT index_id FROM search_indexes').pluck().get() as number;
      raw.exec(`DROP TABLE search_values_${id}`);
      raw.close();
      await assert.rejects(search.update('db', 'sig', [doc('a', 'hello')], 1), /no such table/);
      await search.drop('db', ['sig']);
      assert.equal(await search.open('db', 'sig'), 0);
      await search.update('db', 'sig', [doc('a', 'hello')], 1);
      assert.deepEqual((await search.search('db', 'sig', ALL)).hits.map((hit) => hit.id), ['a']);
    });

    it('document writes go on while it stores batches, and every write and batch lands', async () => {
      const { storage } = ctx();
      await storage.search.open('db', 'sig');
      const batches = Array.from({ length: 20 }, (_, b) => Array.from({ length: 500 }, (_, i) => doc(`s${b * 500 + i}`, `word${i % 50} other${b}`)));
      const writes = Array.from({ length: 20 }, (_, w) => storage.writeDocuments('db', Array.from({ length: 50 }, (_, i) => ({ id: `w${w * 50 + i}`, body: { w }, deleted: false })), { newEdits: true }));
      let seq = 0;
      const stored = (async () => {
        for (const batch of batches) await storage.search.update('db', 'sig', batch, ++seq);
      })();
      const written = await Promise.all(writes);
      await stored;
      assert.ok(written.every((results) => results.every((result) => 'rev' in result)));
      assert.equal((await storage.databaseInfo('db'))?.docCount, 1000);
      assert.equal((await storage.search.search('db', 'sig', ALL)).totalHits, 10_000);
      assert.equal(await storage.search.open('db', 'sig'), 20);
    });
  });
}
