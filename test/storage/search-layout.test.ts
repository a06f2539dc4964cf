/**
 * The SQLite search store's table layout (src/storage/sqlite/sqlite-search.ts): an index whose
 * tables an earlier version laid out differently is dropped and built again when opened, rather
 * than read or written in a shape it no longer has.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { SearchDocument } from '../../src/storage/storage.js';
import { BACKENDS, freshBackend } from '../support/backends.js';

const doc = (id: string, text: string): SearchDocument => ({ id, fields: [{ type: 'text', name: 't', value: text, store: false, analyzer: 'standard' }] });
const ALL = { plan: { kind: 'all' } as const, sort: [{ by: 'id' as const, descending: false }], limit: 10, topN: 10 };

for (const backend of BACKENDS.filter((candidate) => candidate.name === 'sqlite')) {
  describe('SQLite search indexes of an earlier layout', () => {
    const ctx = freshBackend(backend);

    it('an index whose documents table has an earlier layout is built again from sequence 0 when opened', async () => {
      const { search } = ctx().storage;
      assert.equal(await search.open('db', 'sig'), 0);
      await search.update('db', 'sig', [doc('a', 'hello'), doc('b', 'world')], 5);
      assert.equal(await search.open('db', 'sig'), 5);
      await ctx().storage.close();
      const raw = new Database(ctx().file!);
      const id = raw.prepare('SELECT index_id FROM search_indexes').pluck().get() as number;
      raw.exec(`DROP TABLE search_docs_${id}; CREATE TABLE search_docs_${id} (doc_id TEXT PRIMARY KEY) WITHOUT ROWID; INSERT INTO search_docs_${id} VALUES ('a'), ('b');`);
      raw.close();

      const reopened = (await ctx().reopen()).search;
      assert.equal(await reopened.open('db', 'sig'), 0, 'built again from the start');
      assert.deepEqual((await reopened.search('db', 'sig', ALL)).hits, []);
      await reopened.update('db', 'sig', [doc('a', 'hello again')], 6);
      assert.deepEqual((await reopened.search('db', 'sig', ALL)).hits.map((hit) => hit.id), ['a']);
      assert.equal(await reopened.open('db', 'sig'), 6);
      assert.deepEqual(await reopened.list('db').then((indexes) => indexes.map((index) => index.docs)), [1]);
    });
  });
}
