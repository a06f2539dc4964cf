import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend } from '../support/backends.js';

const CONFLICT = { ok: false, id: '_local/cp', error: 'conflict', reason: 'Document update conflict.' };

for (const backend of BACKENDS) {
  describe(`${backend.name}: local documents`, () => {
    const ctx = freshBackend(backend);

    it('numbers revisions 0-1, 0-2, … and checks them', async () => {
      const { storage } = ctx();
      assert.equal(await storage.getLocal('db', '_local/cp'), undefined);
      assert.deepEqual(await storage.putLocal('db', '_local/cp', { seq: 1 }, undefined), { ok: true, id: '_local/cp', rev: '0-1' });
      assert.deepEqual(await storage.getLocal('db', '_local/cp'), { id: '_local/cp', rev: '0-1', body: { seq: 1 } });
      assert.deepEqual(await storage.putLocal('db', '_local/cp', { seq: 2 }, '0-1'), { ok: true, id: '_local/cp', rev: '0-2' });
      assert.deepEqual(await storage.putLocal('db', '_local/cp', { seq: 3 }, '0-1'), CONFLICT, 'stale rev');
      assert.deepEqual(await storage.putLocal('db', '_local/cp', { seq: 3 }, undefined), CONFLICT, 'no rev on an existing one');
      assert.deepEqual(await storage.putLocal('db', '_local/cp', { seq: 3 }, '1-abc'), CONFLICT, 'not a local rev');
      assert.deepEqual(await storage.getLocal('db', '_local/cp'), { id: '_local/cp', rev: '0-2', body: { seq: 2 } });
      assert.deepEqual(await storage.putLocal('db', '_local/new', {}, '0-3'), { ...CONFLICT, id: '_local/new' }, 'rev on a missing one');
    });

    it('deletes with the current rev only', async () => {
      const { storage } = ctx();
      await storage.putLocal('db', '_local/cp', { seq: 1 }, undefined);
      assert.deepEqual(await storage.deleteLocal('db', '_local/cp', '0-2'), CONFLICT);
      assert.deepEqual(await storage.deleteLocal('db', '_local/cp', undefined), CONFLICT);
      assert.deepEqual(await storage.deleteLocal('db', '_local/cp', '0-1'), { ok: true, id: '_local/cp', rev: '0-0' });
      assert.equal(await storage.getLocal('db', '_local/cp'), undefined);
      assert.deepEqual(await storage.putLocal('db', '_local/cp', { again: true }, undefined), { ok: true, id: '_local/cp', rev: '0-1' });
    });

    it('stays out of _all_docs, changes, counts and the sequence', async () => {
      const { storage } = ctx();
      await storage.putLocal('db', '_local/cp', { seq: 1 }, undefined);
      await storage.writeDocuments('db', [{ id: 'doc', body: {}, deleted: false }], { newEdits: true });
      assert.deepEqual((await storage.listDocuments('db', {})).rows.map((row) => row.id), ['doc']);
      assert.deepEqual((await storage.changes('db', {})).map((row) => row.id), ['doc']);
      assert.deepEqual(await storage.lookupDocuments('db', ['_local/cp'], false), [undefined]);
      assert.equal(await storage.readDocument('db', '_local/cp'), undefined);
      const info = await storage.databaseInfo('db');
      assert.equal(info?.docCount, 1);
      assert.equal(info?.updateSeq, 1);
    });

    it('keeps local documents per database', async () => {
      const { storage } = ctx();
      await storage.createDatabase('other', {});
      await storage.putLocal('db', '_local/cp', { db: 'db' }, undefined);
      assert.equal(await storage.getLocal('other', '_local/cp'), undefined);
      assert.deepEqual(await storage.putLocal('other', '_local/cp', { db: 'other' }, undefined), { ok: true, id: '_local/cp', rev: '0-1' });
      assert.deepEqual((await storage.getLocal('db', '_local/cp'))?.body, { db: 'db' });
    });
  });
}
