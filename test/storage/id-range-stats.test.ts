import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend } from '../support/backends.js';

for (const backend of BACKENDS) {
  describe(`${backend.name}: idRangeStats (a partition's counts and sizes)`, () => {
    const ctx = freshBackend(backend);

    it('counts live and deleted documents of [start, end) and the bytes of their leaf bodies', async () => {
      const { storage } = ctx();
      const ids = ['p:1', 'p:2', 'p:3', 'p;', 'q:1', 'o:9', 'p'];
      const written = await storage.writeDocuments('db', ids.map((id) => ({ id, body: { v: 'é' }, deleted: false })), { newEdits: true });
      const third = written[2]!;
      assert.ok(third.ok);
      await storage.writeDocuments('db', [{ id: 'p:3', body: {}, deleted: true, baseRev: third.rev }], { newEdits: true });
      const stats = await storage.idRangeStats('db', 'p:', 'p;');
      assert.deepEqual([stats.docCount, stats.deletedDocCount], [2, 1]);
      // Two live bodies {"v":"é"} of 11 bytes (é is two bytes of UTF-8) and the tombstone's {}.
      assert.equal(stats.dataSize, 2 * Buffer.byteLength(JSON.stringify({ v: 'é' })) + 2);
      assert.deepEqual(await storage.idRangeStats('db', 'x:', 'x;'), { docCount: 0, deletedDocCount: 0, dataSize: 0 });
    });

    it('rejects for a missing database', async () => {
      const { storage } = ctx();
      await assert.rejects(storage.idRangeStats('nodb', 'p:', 'p;'), (error: { status?: number }) => error.status === 404);
    });
  });
}
