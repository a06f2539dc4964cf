import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, OPEN_SECURITY, freshBackend } from '../support/backends.js';
import { CouchError } from '../../src/errors/couch-error.js';

const ADMIN_ONLY = { admins: { names: [], roles: ['_admin'] }, members: { names: [], roles: ['_admin'] } };

function assertDatabaseMissing(error: unknown): true {
  assert.ok(error instanceof CouchError, `expected a CouchError, got ${String(error)}`);
  assert.equal(error.status, 404);
  assert.equal(error.error, 'not_found');
  assert.equal(error.reason, 'Database does not exist.');
  return true;
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: databases`, () => {
    const ctx = freshBackend(backend);

    it('creates a database once', async () => {
      const { storage } = ctx();
      assert.equal(await storage.createDatabase('other', OPEN_SECURITY), true);
      assert.equal(await storage.createDatabase('other', ADMIN_ONLY), false);
      assert.deepEqual(await storage.getSecurity('other'), OPEN_SECURITY);
    });

    it('lists databases in byte order', async () => {
      const { storage } = ctx();
      for (const name of ['b', 'a_b', 'a/b', 'a-b', 'a$', 'a', 'a9', 'a(']) {
        await storage.createDatabase(name, OPEN_SECURITY);
      }
      assert.deepEqual(await storage.listDatabases(), ['a', 'a$', 'a(', 'a-b', 'a/b', 'a9', 'a_b', 'b', 'db']);
    });

    it('deletes a database and everything in it', async () => {
      const { storage } = ctx();
      await storage.writeDocuments('db', [{ id: 'x', body: {}, deleted: false }], { newEdits: true });
      assert.equal(await storage.deleteDatabase('db'), true);
      assert.equal(await storage.deleteDatabase('db'), false);
      assert.deepEqual(await storage.listDatabases(), []);
      assert.equal(await storage.databaseInfo('db'), undefined);
      assert.equal(await storage.getSecurity('db'), undefined);
    });

    it('keeps a database instance_start_time across a reopen; one deleted and created again at once gets a new one (sequences name it)', async () => {
      const opened = ctx();
      const before = (await opened.storage.databaseInfo('db'))?.instanceStartTime;
      const reopened = await opened.reopen();
      assert.equal((await reopened.databaseInfo('db'))?.instanceStartTime, before);
      const seen = new Set([before]);
      for (let round = 0; round < 5; round++) {
        await reopened.deleteDatabase('db');
        await reopened.createDatabase('db', OPEN_SECURITY);
        seen.add((await reopened.databaseInfo('db'))?.instanceStartTime);
      }
      assert.equal(seen.size, 6, 'every instance has its own instance_start_time');
    });

    it('starts a recreated database empty, at sequence 0', async () => {
      const { storage } = ctx();
      await storage.writeDocuments('db', [{ id: 'x', body: { v: 1 }, deleted: false }], { newEdits: true });
      await storage.putLocal('db', '_local/c', { v: 1 }, undefined);
      await storage.putSecurity('db', ADMIN_ONLY);
      await storage.deleteDatabase('db');
      assert.equal(await storage.createDatabase('db', OPEN_SECURITY), true);
      const info = await storage.databaseInfo('db');
      assert.equal(info?.updateSeq, 0);
      assert.equal(info?.docCount, 0);
      assert.equal(info?.deletedDocCount, 0);
      assert.equal(info?.dataSize, 0);
      assert.equal(await storage.readDocument('db', 'x'), undefined);
      assert.equal(await storage.getLocal('db', '_local/c'), undefined);
      assert.deepEqual(await storage.getSecurity('db'), OPEN_SECURITY);
      const [created] = await storage.writeDocuments('db', [{ id: 'x', body: { v: 1 }, deleted: false }], {
        newEdits: true,
      });
      assert.ok(created.ok && created.rev.startsWith('1-'));
      assert.equal((await storage.readDocument('db', 'x'))?.seq, 1);
    });

    it('reads and replaces _security', async () => {
      const { storage } = ctx();
      assert.deepEqual(await storage.getSecurity('db'), OPEN_SECURITY);
      assert.equal(await storage.putSecurity('db', ADMIN_ONLY), true);
      assert.deepEqual(await storage.getSecurity('db'), ADMIN_ONLY);
      assert.equal(await storage.putSecurity('missing', ADMIN_ONLY), false);
      assert.equal(await storage.getSecurity('missing'), undefined);
    });

    it('reports counts, sequence and size', async () => {
      const { storage } = ctx();
      const created = Date.now() * 1000;
      await storage.createDatabase('fresh', OPEN_SECURITY);
      const empty = await storage.databaseInfo('fresh');
      assert.ok(empty);
      assert.deepEqual({ ...empty, instanceStartTime: '' }, {
        name: 'fresh',
        docCount: 0,
        deletedDocCount: 0,
        updateSeq: 0,
        dataSize: 0,
        compactableSize: 0,
        instanceStartTime: '',
        revsLimit: 1000,
        purgedInfosLimit: 1000,
        purgeSeq: 0,
      });
      assert.match(empty.instanceStartTime, /^[0-9]+$/);
      assert.ok(Math.abs(Number(empty.instanceStartTime) - created) < 60_000_000, 'microseconds since the epoch');

      const results = await storage.writeDocuments(
        'fresh',
        [
          { id: 'a', body: { text: 'x'.repeat(1000) }, deleted: false },
          { id: 'b', body: { n: 1 }, deleted: false },
          { id: 'c', body: { n: 2 }, deleted: false },
        ],
        { newEdits: true },
      );
      const withThree = await storage.databaseInfo('fresh');
      assert.equal(withThree?.docCount, 3);
      assert.equal(withThree?.updateSeq, 3);
      assert.ok((withThree?.dataSize ?? 0) >= 1000);

      const a = results[0];
      assert.ok(a.ok);
      await storage.writeDocuments('fresh', [{ id: 'a', body: {}, deleted: true, baseRev: a.rev }], { newEdits: true });
      const afterDelete = await storage.databaseInfo('fresh');
      assert.equal(afterDelete?.docCount, 2);
      assert.equal(afterDelete?.deletedDocCount, 1);
      assert.equal(afterDelete?.updateSeq, 4);
      assert.ok((afterDelete?.dataSize ?? 0) < 1000, 'the replaced body no longer counts');
      assert.equal(afterDelete?.instanceStartTime, empty.instanceStartTime);
    });

    it('rejects reads and writes on a missing database with not_found', async () => {
      const { storage } = ctx();
      await assert.rejects(
        storage.writeDocuments('missing', [{ id: 'x', body: {}, deleted: false }], { newEdits: true }),
        assertDatabaseMissing,
      );
      await assert.rejects(
        storage.writeDocuments('missing', [{ id: 'x', body: {}, deleted: false, revPath: ['1-a'] }], {
          newEdits: false,
        }),
        assertDatabaseMissing,
      );
      await assert.rejects(storage.putLocal('missing', '_local/x', {}, undefined), assertDatabaseMissing);
      await assert.rejects(storage.deleteLocal('missing', '_local/x', undefined), assertDatabaseMissing);
      await assert.rejects(storage.readDocument('missing', 'x'), assertDatabaseMissing);
      await assert.rejects(storage.listDocuments('missing', {}), assertDatabaseMissing);
      await assert.rejects(storage.lookupDocuments('missing', ['x'], false), assertDatabaseMissing);
      await assert.rejects(storage.changes('missing', {}), assertDatabaseMissing);
      await assert.rejects(storage.getLocal('missing', '_local/x'), assertDatabaseMissing);
      assert.equal(await storage.databaseInfo('missing'), undefined);
    });

    it('answers ping', async () => {
      await ctx().storage.ping();
    });
  });
}
