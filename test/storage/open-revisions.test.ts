import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend } from '../support/backends.js';
import { CouchError } from '../../src/errors/couch-error.js';
import type { JsonObject, OpenedRevision, Storage } from '../../src/storage/storage.js';

// Hand-made revisions as a replication peer would send them (32 hex digits each).
const r = (generation: number, digit: string): string => `${generation}-${digit.repeat(32)}`;
const A1 = r(1, 'a');
const B2 = r(2, 'b');
const C2 = r(2, 'c');
const D3 = r(3, 'd');
const F3 = r(3, 'f');

async function replicate(storage: Storage, id: string, revPath: string[], body: JsonObject, deleted = false): Promise<void> {
  const [result] = await storage.writeDocuments('db', [{ id, body, deleted, revPath }], { newEdits: false });
  assert.ok(result.ok);
}

/** doc: 1-a ─┬─ 2-b ── 3-d (live)   and   └─ 2-c ── 3-f (deleted) */
async function branched(storage: Storage): Promise<void> {
  await replicate(storage, 'doc', [D3, B2, A1], { v: 'd' });
  await replicate(storage, 'doc', [F3, C2, A1], { v: 'f' }, true);
}

const brief = (opened: OpenedRevision[]) =>
  opened.map((item) => ('ok' in item ? ['ok', item.ok.rev, item.ok.deleted, item.ok.body] : ['missing', item.missing]));

for (const backend of BACKENDS) {
  describe(`${backend.name}: open revisions and revision trees (replication reads)`, () => {
    const ctx = freshBackend(backend);

    it('open_revs=all gives every leaf with its body, winner first, tombstones included', async () => {
      const { storage } = ctx();
      await branched(storage);
      const [all] = await storage.openRevisions('db', [{ id: 'doc', revs: 'all' }]);
      assert.deepEqual(brief(all), [
        ['ok', D3, false, { v: 'd' }],
        ['ok', F3, true, { v: 'f' }],
      ]);
      const winner = (all[0] as { ok: { revisionPath: string[]; revisionStart: number; deletedConflicts: string[] } }).ok;
      assert.deepEqual(winner.revisionPath, ['d'.repeat(32), 'b'.repeat(32), 'a'.repeat(32)]);
      assert.equal(winner.revisionStart, 3);
      assert.deepEqual(winner.deletedConflicts, [F3]);
    });

    it('asked revisions: leaves open, interior ones without a body and unknown ones are missing, in the asked order', async () => {
      const { storage } = ctx();
      await branched(storage);
      const unknown = r(4, '9');
      const [opened] = await storage.openRevisions('db', [{ id: 'doc', revs: [F3, B2, unknown, D3, F3] }]);
      assert.deepEqual(brief(opened), [
        ['ok', F3, true, { v: 'f' }],
        ['missing', B2],
        ['ok', D3, false, { v: 'd' }],
        ['missing', unknown],
      ]);
    });

    it('latest=true opens the leaves that descend from an interior revision', async () => {
      const { storage } = ctx();
      await branched(storage);
      const [fromB] = await storage.openRevisions('db', [{ id: 'doc', revs: [B2], latest: true }]);
      assert.deepEqual(brief(fromB), [['ok', D3, false, { v: 'd' }]]);
      const [fromRoot] = await storage.openRevisions('db', [{ id: 'doc', revs: [A1], latest: true }]);
      assert.deepEqual(brief(fromRoot).map((item) => item[1]), [D3, F3]);
    });

    it('several documents in one call; an unknown id gives [] for all and missing for asked revs', async () => {
      const { storage } = ctx();
      await branched(storage);
      await replicate(storage, 'other', [A1], { o: 1 });
      const results = await storage.openRevisions('db', [
        { id: 'nope', revs: 'all' },
        { id: 'other', revs: [A1] },
        { id: 'nope', revs: [A1] },
        { id: 'doc', revs: [D3] },
      ]);
      assert.deepEqual(results.map(brief), [
        [],
        [['ok', A1, false, { o: 1 }]],
        [['missing', A1]],
        [['ok', D3, false, { v: 'd' }]],
      ]);
    });

    it('a missing database is a not-found CouchError for both reads', async () => {
      const { storage } = ctx();
      for (const read of [() => storage.openRevisions('nodb', [{ id: 'a', revs: 'all' }]), () => storage.revisionTrees('nodb', ['a'])]) {
        await assert.rejects(read(), (error: unknown) => error instanceof CouchError && error.status === 404);
      }
    });

    it('revisionTrees returns each tree in the asked order, undefined for unknown ids', async () => {
      const { storage } = ctx();
      await branched(storage);
      const [missing, tree, again] = await storage.revisionTrees('db', ['nope', 'doc', 'doc']);
      assert.equal(missing, undefined);
      assert.deepEqual(tree, {
        [A1]: { parent: null, deleted: false },
        [B2]: { parent: A1, deleted: false },
        [C2]: { parent: A1, deleted: false },
        [D3]: { parent: B2, deleted: false },
        [F3]: { parent: C2, deleted: true },
      });
      assert.deepEqual(again, tree);
    });

    it('changes can be limited to given ids, with limit counting matching rows only', async () => {
      const { storage } = ctx();
      for (const id of ['a', 'b', 'c', 'd', 'e']) await storage.writeDocuments('db', [{ id, body: {}, deleted: false }], { newEdits: true });
      const rows = await storage.changes('db', { ids: ['e', 'b', 'zz', 'd'] });
      assert.deepEqual(rows.map((row) => [row.seq, row.id]), [
        [2, 'b'],
        [4, 'd'],
        [5, 'e'],
      ]);
      assert.deepEqual((await storage.changes('db', { ids: ['e', 'b', 'd'], since: 2, limit: 1 })).map((row) => row.id), ['d']);
      assert.deepEqual(await storage.changes('db', { ids: [] }), []);
    });

    it('changes report live conflicts when asked, with the winner body', async () => {
      const { storage } = ctx();
      await replicate(storage, 'doc', [B2, A1], { v: 'b' });
      await replicate(storage, 'doc', [C2, A1], { v: 'c' });
      await replicate(storage, 'doc', [F3, r(2, 'e'), A1], {}, true);
      const [row] = await storage.changes('db', { conflicts: true, includeDocs: true });
      assert.deepEqual(row.changes, [C2]);
      assert.deepEqual(row.conflicts, [B2]);
      assert.deepEqual(row.body, { v: 'c' });
      const [plain] = await storage.changes('db', {});
      assert.equal(plain.conflicts, undefined);
    });

    it('sequences and trees survive closing and reopening the store', async () => {
      const opened = ctx();
      await branched(opened.storage);
      await replicate(opened.storage, 'later', [A1], {});
      const before = await opened.storage.changes('db', { since: 0 });
      const storage = await opened.reopen();
      assert.deepEqual(await storage.changes('db', { since: 0 }), before);
      assert.deepEqual((await storage.changes('db', { since: before[0].seq })).map((row) => row.id), ['later']);
      const [all] = await storage.openRevisions('db', [{ id: 'doc', revs: 'all' }]);
      assert.deepEqual(brief(all).map((item) => item[1]), [D3, F3]);
      assert.equal((await storage.databaseInfo('db'))?.updateSeq, before[before.length - 1].seq);
    });
  });
}
