import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, OPEN_SECURITY, freshBackend } from '../support/backends.js';
import { CouchError } from '../../src/errors/couch-error.js';
import { revisionHash } from '../../src/revisions/revision-tree.js';
import type { DocumentEdit, EditResult, JsonObject, Storage } from '../../src/storage/storage.js';

const REV1 = /^1-[0-9a-f]{32}$/;
const CONFLICT = { error: 'conflict', reason: 'Document update conflict.' } as const;

async function put(storage: Storage, edit: DocumentEdit, db = 'db'): Promise<EditResult> {
  const [result] = await storage.writeDocuments(db, [edit], { newEdits: true });
  return result;
}

async function putOk(storage: Storage, edit: DocumentEdit): Promise<string> {
  const result = await put(storage, edit);
  assert.ok(result.ok, `expected ${edit.id} to be written`);
  return result.rev;
}

const hashOf = (rev: string): string => rev.slice(rev.indexOf('-') + 1);

for (const backend of BACKENDS) {
  describe(`${backend.name}: documents (new_edits=true)`, () => {
    const ctx = freshBackend(backend);

    it('creates a document at 1-<32 hex> and reads it back', async () => {
      const { storage } = ctx();
      const body: JsonObject = { name: 'Zoë', n: 1.5, list: [1, null, { deep: true }], empty: {} };
      const result = await put(storage, { id: 'doc', body, deleted: false });
      assert.ok(result.ok);
      assert.equal(result.id, 'doc');
      assert.match(result.rev, REV1);
      assert.deepEqual(await storage.readDocument('db', 'doc'), {
        id: 'doc',
        rev: result.rev,
        deleted: false,
        body,
        seq: 1,
        revisionPath: [hashOf(result.rev)],
        revisionStart: 1,
        conflicts: [],
        deletedConflicts: [],
      });
    });

    it('updates with the current rev', async () => {
      const { storage } = ctx();
      const rev1 = await putOk(storage, { id: 'doc', body: { v: 1 }, deleted: false });
      const rev2 = await putOk(storage, { id: 'doc', body: { v: 2 }, deleted: false, baseRev: rev1 });
      assert.match(rev2, /^2-[0-9a-f]{32}$/);
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.rev, rev2);
      assert.deepEqual(doc?.body, { v: 2 });
      assert.deepEqual(doc?.revisionPath, [hashOf(rev2), hashOf(rev1)]);
      assert.equal(doc?.revisionStart, 2);
      assert.equal(doc?.seq, 2);
    });

    it('answers conflict (not an error) for a stale, unknown or missing rev', async () => {
      const { storage } = ctx();
      const rev1 = await putOk(storage, { id: 'doc', body: { v: 1 }, deleted: false });
      const rev2 = await putOk(storage, { id: 'doc', body: { v: 2 }, deleted: false, baseRev: rev1 });
      const attempts: DocumentEdit[] = [
        { id: 'doc', body: { v: 3 }, deleted: false, baseRev: rev1 },
        { id: 'doc', body: { v: 3 }, deleted: false, baseRev: `2-${'0'.repeat(32)}` },
        { id: 'doc', body: { v: 3 }, deleted: false },
        { id: 'doc', body: {}, deleted: true },
        { id: 'doc', body: {}, deleted: true, baseRev: rev1 },
        { id: 'new', body: { v: 1 }, deleted: false, baseRev: rev1 },
      ];
      const results = await storage.writeDocuments('db', attempts, { newEdits: true });
      assert.deepEqual(
        results,
        attempts.map((a) => ({ ok: false, id: a.id, ...CONFLICT })),
      );
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.rev, rev2);
      assert.equal((await storage.databaseInfo('db'))?.updateSeq, 2, 'conflicts do not move the sequence');
      assert.equal(await storage.readDocument('db', 'new'), undefined);
    });

    it('deletes into a tombstone that reads as deleted', async () => {
      const { storage } = ctx();
      const rev1 = await putOk(storage, { id: 'doc', body: { v: 1 }, deleted: false });
      const rev2 = await putOk(storage, { id: 'doc', body: {}, deleted: true, baseRev: rev1 });
      assert.match(rev2, /^2-[0-9a-f]{32}$/);
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.deleted, true);
      assert.equal(doc?.rev, rev2);
      assert.deepEqual(doc?.body, {});
      assert.deepEqual(doc?.revisionPath, [hashOf(rev2), hashOf(rev1)]);
      assert.equal((await storage.readDocument('db', 'doc', { rev: rev2 }))?.deleted, true);
      const info = await storage.databaseInfo('db');
      assert.equal(info?.docCount, 0);
      assert.equal(info?.deletedDocCount, 1);
    });

    it('recreates a deleted document on top of its tombstone', async () => {
      const { storage } = ctx();
      const rev1 = await putOk(storage, { id: 'doc', body: { v: 1 }, deleted: false });
      const rev2 = await putOk(storage, { id: 'doc', body: {}, deleted: true, baseRev: rev1 });
      const rev3 = await putOk(storage, { id: 'doc', body: { v: 3 }, deleted: false });
      assert.match(rev3, /^3-[0-9a-f]{32}$/);
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.deleted, false);
      assert.deepEqual(doc?.body, { v: 3 });
      assert.deepEqual(doc?.revisionPath, [rev3, rev2, rev1].map(hashOf));
      assert.deepEqual(doc?.deletedConflicts, []);
      const info = await storage.databaseInfo('db');
      assert.equal(info?.docCount, 1);
      assert.equal(info?.deletedDocCount, 0);
    });

    it('accepts the tombstone rev to recreate a deleted document', async () => {
      const { storage } = ctx();
      const rev1 = await putOk(storage, { id: 'doc', body: { v: 1 }, deleted: false });
      const rev2 = await putOk(storage, { id: 'doc', body: {}, deleted: true, baseRev: rev1 });
      const rev3 = await putOk(storage, { id: 'doc', body: { v: 3 }, deleted: false, baseRev: rev2 });
      assert.ok(rev3.startsWith('3-'));
      assert.deepEqual(await put(storage, { id: 'doc', body: { v: 4 }, deleted: false, baseRev: rev1 }), {
        ok: false,
        id: 'doc',
        ...CONFLICT,
      });
    });

    it('applies two edits of one id in one call in order', async () => {
      const { storage } = ctx();
      const rev1 = await putOk(storage, { id: 'doc', body: { v: 1 }, deleted: false });
      const results = await storage.writeDocuments(
        'db',
        [
          { id: 'doc', body: { v: 2 }, deleted: false, baseRev: rev1 },
          { id: 'doc', body: { v: 'other' }, deleted: false, baseRev: rev1 },
          { id: 'fresh', body: { v: 1 }, deleted: false },
          { id: 'fresh', body: { v: 1 }, deleted: false },
        ],
        { newEdits: true },
      );
      assert.equal(results[0].ok, true);
      assert.deepEqual(results[1], { ok: false, id: 'doc', ...CONFLICT });
      assert.equal(results[2].ok, true);
      assert.deepEqual(results[3], { ok: false, id: 'fresh', ...CONFLICT });
      assert.ok(results[0].ok);
      const doc = await storage.readDocument('db', 'doc');
      assert.equal(doc?.rev, results[0].rev);
      assert.deepEqual(doc?.conflicts, []);
    });

    it('lets the second edit of one call build on the first', async () => {
      const { storage } = ctx();
      // Revs are deterministic, so the rev the first edit will get is known in advance.
      const expected = `1-${revisionHash(false, null, { v: 1 })}`;
      const results = await storage.writeDocuments(
        'db',
        [
          { id: 'doc', body: { v: 1 }, deleted: false },
          { id: 'doc', body: {}, deleted: true, baseRev: expected },
        ],
        { newEdits: true },
      );
      assert.deepEqual(results[0], { ok: true, id: 'doc', rev: expected });
      assert.ok(results[1].ok && results[1].rev.startsWith('2-'));
      assert.equal((await storage.readDocument('db', 'doc'))?.deleted, true);
      assert.equal((await storage.databaseInfo('db'))?.updateSeq, 2);
    });

    it('generates the same rev for the same edit on two databases, and another for the same members in another order (as CouchDB)', async () => {
      const { storage } = ctx();
      await storage.createDatabase('other', OPEN_SECURITY);
      const body = { b: [1, 2], a: 'x' };
      const here = await put(storage, { id: 'doc', body, deleted: false });
      const there = await put(storage, { id: 'doc', body: { b: [1, 2], a: 'x' }, deleted: false }, 'other');
      const reordered = await put(storage, { id: 'doc3', body: { a: 'x', b: [1, 2] }, deleted: false });
      assert.ok(reordered.ok && here.ok);
      assert.notEqual(reordered.rev, here.rev);
      assert.ok(here.ok && there.ok);
      assert.equal(here.rev, there.rev);
      const hereNext = await put(storage, { id: 'doc', body: { v: 2 }, deleted: false, baseRev: here.rev });
      const thereNext = await put(storage, { id: 'doc', body: { v: 2 }, deleted: false, baseRev: there.rev }, 'other');
      assert.ok(hereNext.ok && thereNext.ok);
      assert.equal(hereNext.rev, thereNext.rev);
      const different = await put(storage, { id: 'doc2', body: { a: 'y', b: [1, 2] }, deleted: false }, 'other');
      assert.ok(different.ok);
      assert.notEqual(different.rev, here.rev);
    });

    it('reads a revision by rev (an older one until compaction) and answers undefined for unknown ids and revs', async () => {
      const { storage } = ctx();
      const rev1 = await putOk(storage, { id: 'doc', body: { v: 1 }, deleted: false });
      const rev2 = await putOk(storage, { id: 'doc', body: { v: 2 }, deleted: false, baseRev: rev1 });
      assert.deepEqual((await storage.readDocument('db', 'doc', { rev: rev2 }))?.body, { v: 2 });
      assert.equal(await storage.readDocument('db', 'doc', { rev: `9-${'a'.repeat(32)}` }), undefined);
      assert.equal(await storage.readDocument('db', 'doc', { rev: 'garbage' }), undefined);
      // As in CouchDB, an older revision keeps its body until compaction.
      assert.deepEqual((await storage.readDocument('db', 'doc', { rev: rev1 }))?.body, { v: 1 });
      await storage.compact('db');
      assert.equal(await storage.readDocument('db', 'doc', { rev: rev1 }), undefined);
      assert.equal(await storage.readDocument('db', 'nope'), undefined);
    });

    it('keeps design documents and unusual ids', async () => {
      const { storage } = ctx();
      for (const id of ['_design/app', 'with space', 'ünïcødé/ключ', '😀']) {
        await putOk(storage, { id, body: { id }, deleted: false });
        assert.deepEqual((await storage.readDocument('db', id))?.body, { id });
      }
      assert.equal((await storage.databaseInfo('db'))?.docCount, 4);
    });

    it('refuses a malformed rev with bad_request and writes nothing', async () => {
      const { storage } = ctx();
      await assert.rejects(
        storage.writeDocuments(
          'db',
          [
            { id: 'ok', body: {}, deleted: false },
            { id: 'x', body: {}, deleted: false, baseRev: 'not-a-rev' },
          ],
          { newEdits: true },
        ),
        (error: unknown) => error instanceof CouchError && error.status === 400 && error.error === 'bad_request',
      );
      assert.equal(await storage.readDocument('db', 'ok'), undefined);
    });
  });
}
