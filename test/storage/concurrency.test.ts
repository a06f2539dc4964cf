import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, OPEN_SECURITY, freshBackend } from '../support/backends.js';
import { CouchError } from '../../src/errors/couch-error.js';

for (const backend of BACKENDS) {
  describe(`${backend.name}: concurrent writes`, () => {
    const ctx = freshBackend(backend);

    it('writes 200 documents written at once, each at its own sequence', async () => {
      const { storage } = ctx();
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          storage.writeDocuments('db', [{ id: `doc-${String(i).padStart(3, '0')}`, body: { i }, deleted: false }], {
            newEdits: true,
          }),
        ),
      );
      assert.ok(results.every(([result]) => result.ok));
      const info = await storage.databaseInfo('db');
      assert.equal(info?.docCount, 200);
      assert.equal(info?.updateSeq, 200);
      const changes = await storage.changes('db', {});
      assert.deepEqual(
        changes.map((row) => row.seq),
        Array.from({ length: 200 }, (_, i) => i + 1),
      );
      const doc = await storage.readDocument('db', 'doc-137');
      assert.deepEqual(doc?.body, { i: 137 });
    });

    it('lets exactly one of 50 concurrent edits of the same revision win', async () => {
      const { storage } = ctx();
      const [created] = await storage.writeDocuments('db', [{ id: 'doc', body: { n: -1 }, deleted: false }], {
        newEdits: true,
      });
      assert.ok(created.ok);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, n) =>
          storage.writeDocuments('db', [{ id: 'doc', body: { n }, deleted: false, baseRev: created.rev }], {
            newEdits: true,
          }),
        ),
      );
      const winners = results.flat().filter((result) => result.ok);
      const losers = results.flat().filter((result) => !result.ok);
      assert.equal(winners.length, 1);
      assert.equal(losers.length, 49);
      assert.ok(losers.every((result) => !result.ok && result.error === 'conflict'));
      const doc = await storage.readDocument('db', 'doc');
      assert.ok(winners[0].ok);
      assert.equal(doc?.rev, winners[0].rev);
      assert.deepEqual(doc?.conflicts, []);
      assert.equal((await storage.databaseInfo('db'))?.updateSeq, 2);
    });

    it('fails only the writes that target a missing database', async () => {
      const { storage } = ctx();
      const outcomes = await Promise.allSettled([
        storage.writeDocuments('db', [{ id: 'a', body: {}, deleted: false }], { newEdits: true }),
        storage.writeDocuments('missing', [{ id: 'b', body: {}, deleted: false }], { newEdits: true }),
        storage.putLocal('missing', '_local/x', {}, undefined),
        storage.putLocal('db', '_local/x', {}, undefined),
        storage.writeDocuments('db', [{ id: 'c', body: {}, deleted: false, baseRev: 'bad rev' }], { newEdits: true }),
        storage.writeDocuments('db', [{ id: 'd', body: {}, deleted: false }], { newEdits: true }),
      ]);
      assert.deepEqual(
        outcomes.map((o) => (o.status === 'fulfilled' ? 'ok' : o.reason instanceof CouchError ? o.reason.error : 'other')),
        ['ok', 'not_found', 'not_found', 'ok', 'bad_request', 'ok'],
      );
      assert.deepEqual((await storage.listDocuments('db', {})).rows.map((row) => row.id), ['a', 'd']);
      assert.equal((await storage.getLocal('db', '_local/x'))?.rev, '0-1');
    });

    it('creates a database once when asked concurrently', async () => {
      const { storage } = ctx();
      const created = await Promise.all(Array.from({ length: 10 }, () => storage.createDatabase('race', OPEN_SECURITY)));
      assert.equal(created.filter(Boolean).length, 1);
    });

    it('rejects writes queued before their database is deleted', async () => {
      const { storage } = ctx();
      const deleting = storage.deleteDatabase('db');
      const writing = storage.writeDocuments('db', [{ id: 'a', body: {}, deleted: false }], { newEdits: true });
      assert.equal(await deleting, true);
      await assert.rejects(writing, (error: unknown) => error instanceof CouchError && error.status === 404);
    });
  });
}
