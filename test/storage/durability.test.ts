import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, OPEN_SECURITY } from '../support/backends.js';

const ADMIN_ONLY = { admins: { names: [], roles: ['_admin'] }, members: { names: [], roles: [] } };

for (const backend of BACKENDS) {
  describe(`${backend.name}: durability`, () => {
    it('keeps everything across a close and reopen', async () => {
      const opened = await backend.open();
      try {
        let storage = opened.storage;
        await storage.createDatabase('db', OPEN_SECURITY);
        await storage.createDatabase('gone', OPEN_SECURITY);
        await storage.deleteDatabase('gone');
        await storage.putSecurity('db', ADMIN_ONLY);
        const [a, b] = await storage.writeDocuments(
          'db',
          [
            { id: 'a', body: { v: 'a' }, deleted: false },
            { id: 'b', body: { v: 'b' }, deleted: false },
          ],
          { newEdits: true },
        );
        assert.ok(a.ok && b.ok);
        await storage.writeDocuments('db', [{ id: 'b', body: {}, deleted: true, baseRev: b.rev }], { newEdits: true });
        // A second root at generation 1 with a higher hash: a conflict that wins.
        const branch = `1-${'f'.repeat(32)}`;
        await storage.writeDocuments('db', [{ id: 'a', body: { v: 'branch' }, deleted: false, revPath: [branch] }], {
          newEdits: false,
        });
        await storage.putLocal('db', '_local/cp', { seq: 3 }, undefined);
        const before = {
          info: await storage.databaseInfo('db'),
          a: await storage.readDocument('db', 'a'),
          b: await storage.readDocument('db', 'b'),
          all: await storage.listDocuments('db', { includeDocs: true }),
          changes: await storage.changes('db', { allLeaves: true }),
        };

        storage = await opened.reopen();
        assert.deepEqual(await storage.listDatabases(), ['db']);
        assert.deepEqual(await storage.getSecurity('db'), ADMIN_ONLY);
        assert.deepEqual(await storage.databaseInfo('db'), before.info);
        assert.deepEqual(await storage.readDocument('db', 'a'), before.a);
        assert.equal(before.a?.rev, branch);
        assert.deepEqual(before.a?.conflicts, [a.rev]);
        assert.deepEqual(await storage.readDocument('db', 'b'), before.b);
        assert.equal(before.b?.deleted, true);
        assert.deepEqual(await storage.listDocuments('db', { includeDocs: true }), before.all);
        assert.deepEqual(await storage.changes('db', { allLeaves: true }), before.changes);
        assert.deepEqual(await storage.getLocal('db', '_local/cp'), { id: '_local/cp', rev: '0-1', body: { seq: 3 } });

        const [c] = await storage.writeDocuments('db', [{ id: 'c', body: {}, deleted: false }], { newEdits: true });
        assert.ok(c.ok);
        assert.equal((await storage.readDocument('db', 'c'))?.seq, (before.info?.updateSeq ?? 0) + 1, 'the sequence continues');
      } finally {
        await opened.cleanup();
      }
    });

    it('commits writes still queued when closing', async () => {
      const opened = await backend.open();
      try {
        const storage = opened.storage;
        await storage.createDatabase('db', OPEN_SECURITY);
        const pending = storage.writeDocuments('db', [{ id: 'late', body: { v: 1 }, deleted: false }], { newEdits: true });
        const local = storage.putLocal('db', '_local/late', { v: 1 }, undefined);
        const reopened = await opened.reopen();
        const [result] = await pending;
        assert.ok(result.ok);
        assert.equal((await local).ok, true);
        assert.equal((await reopened.readDocument('db', 'late'))?.rev, result.rev);
        assert.equal((await reopened.getLocal('db', '_local/late'))?.rev, '0-1');
      } finally {
        await opened.cleanup();
      }
    });
  });
}
