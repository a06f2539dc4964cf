// The per-principal orders (`by-access-id`, `by-access-seq`): kept with every write, they list and
// count exactly the documents whose winning revision names one of the principals in `_access`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend } from '../support/backends.js';
import type { DocumentEdit, JsonObject, Storage } from '../../src/storage/storage.js';
import { DESIGN_PRINCIPAL } from '../../src/storage/access-store.js';

async function put(storage: Storage, edit: Omit<DocumentEdit, 'deleted'> & { deleted?: boolean }): Promise<string> {
  const [result] = await storage.writeDocuments('db', [{ deleted: false, ...edit }], { newEdits: true });
  assert.ok(result.ok, JSON.stringify(result));
  return result.rev;
}

const ALICE = [DESIGN_PRINCIPAL, 'alice', 'team'];
const BOB = [DESIGN_PRINCIPAL, 'bob'];

async function ids(storage: Storage, principals: string[]): Promise<string[]> {
  return (await storage.access.listDocuments('db', principals, {})).rows.map((row) => row.id);
}

async function changed(storage: Storage, principals: string[], since = 0): Promise<[string, number, boolean][]> {
  return (await storage.access.changes('db', principals, { since })).map((row) => [row.id, row.seq, row.deleted]);
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: per-principal orders`, () => {
    const ctx = freshBackend(backend);

    it('lists and counts the documents naming a principal (by name or role), design documents for everyone', async () => {
      const { storage } = ctx();
      await put(storage, { id: 'a1', body: { _access: ['alice'] } as JsonObject });
      await put(storage, { id: 'b1', body: { _access: ['bob'] } as JsonObject });
      await put(storage, { id: 't1', body: { _access: ['team', 'alice'] } as JsonObject });
      await put(storage, { id: 'plain', body: { x: 1 } });
      await put(storage, { id: '_design/app', body: { views: {} } });
      assert.deepEqual(await ids(storage, ALICE), ['_design/app', 'a1', 't1']);
      assert.deepEqual(await ids(storage, BOB), ['_design/app', 'b1']);
      const page = await storage.access.listDocuments('db', ALICE, { startKey: 'a1', limit: 1, includeDocs: true });
      assert.deepEqual([page.totalRows, page.offset, page.rows[0]!.id, page.rows[0]!.body!['_access']], [3, 1, 'a1', ['alice']]);
      const down = await storage.access.listDocuments('db', ALICE, { descending: true, startKey: 't0' });
      assert.deepEqual([down.offset, down.rows.map((row) => row.id)], [1, ['a1', '_design/app']]);
      assert.deepEqual((await changed(storage, ALICE)).map(([id]) => id), ['a1', 't1', '_design/app']);
      assert.deepEqual(await storage.access.stats('db', ALICE, 0), { docCount: 3, deletedDocCount: 0, updateSeq: 5, pendingAfter: 3 });
      assert.deepEqual(await storage.access.stats('db', ['carol'], 0), { docCount: 0, deletedDocCount: 0, updateSeq: 0, pendingAfter: 0 });
    });

    it('follows updates, deletions (tombstones keep their principals) and conflicts (the winner decides)', async () => {
      const { storage } = ctx();
      const first = await put(storage, { id: 'd', body: { _access: ['alice', 'bob'] } as JsonObject });
      const second = await put(storage, { id: 'd', body: { _access: ['bob'] } as JsonObject, baseRev: first });
      assert.deepEqual(await ids(storage, ALICE), []);
      assert.deepEqual(await changed(storage, BOB), [['d', 2, false]]);
      await put(storage, { id: 'd', body: { _access: ['bob'] } as JsonObject, baseRev: second, deleted: true });
      assert.deepEqual(await ids(storage, BOB), []);
      assert.deepEqual(await changed(storage, BOB, 2), [['d', 3, true]]);
      assert.equal((await storage.access.stats('db', BOB, 0)).deletedDocCount, 1);
      // A replicated branch that wins (longer) brings its own principals.
      const [merged] = await storage.writeDocuments('db', [{ id: 'd', body: { _access: ['alice'] } as JsonObject, deleted: false, revPath: [`3-${'e'.repeat(32)}`, `2-${'d'.repeat(32)}`, first] }], { newEdits: false });
      assert.ok(merged.ok);
      assert.deepEqual(await ids(storage, ALICE), ['d']);
      assert.deepEqual(await ids(storage, BOB), []);
    });

    it('a purge takes a document out of its principals\' orders; deleting the database drops every row', async () => {
      const { storage } = ctx();
      const rev = await put(storage, { id: 'p', body: { _access: ['alice'] } as JsonObject });
      await storage.purgeDocuments('db', [{ id: 'p', revs: [rev] }]);
      assert.deepEqual(await ids(storage, ALICE), []);
      await put(storage, { id: 'q', body: { _access: ['alice'] } as JsonObject });
      await storage.deleteDatabase('db');
      await storage.createDatabase('db', {});
      assert.deepEqual(await ids(storage, ALICE), []);
      await assert.rejects(storage.access.changes('nope', ALICE, {}), { status: 404 });
    });
  });
}
