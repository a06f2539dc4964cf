import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { BACKENDS, freshBackend } from '../support/backends.js';
import { ATTACHMENT_CHUNK_SIZE } from '../../src/storage/attachment-store.js';
import { CouchError } from '../../src/errors/couch-error.js';
import type { JsonObject, SavedAttachment, Storage } from '../../src/storage/storage.js';

const tooLarge = (): Error => new CouchError(413, 'attachment_too_large', 'x');

/** `bytes` as a stream of uneven pieces, as a socket delivers them. */
async function* pieces(bytes: Buffer, size = 10_000): AsyncIterable<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function readAll(storage: Storage, digest: string, range?: { start: number; end: number }): Promise<Buffer | undefined> {
  const chunks = await storage.attachments.read('db', digest, range);
  if (chunks === undefined) return undefined;
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

function stubBody(saved: SavedAttachment, extra: JsonObject = {}): JsonObject {
  return { ...extra, _attachments: { f: { content_type: 'application/octet-stream', revpos: 1, digest: saved.digest, length: saved.length, stub: true } } };
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: attachment data`, () => {
    const ctx = freshBackend(backend);

    it('streams data in, answers its MD5 digest and length, reads it back whole and by range', async () => {
      const { storage } = ctx();
      const bytes = randomBytes(ATTACHMENT_CHUNK_SIZE * 2 + 12_345);
      const saved = await storage.attachments.save('db', pieces(bytes), 10 * 1024 * 1024, tooLarge);
      assert.deepEqual(saved, { digest: `md5-${createHash('md5').update(bytes).digest('base64')}`, length: bytes.length });
      assert.ok((await readAll(storage, saved.digest))?.equals(bytes));
      const start = ATTACHMENT_CHUNK_SIZE - 3;
      assert.ok((await readAll(storage, saved.digest, { start, end: start + ATTACHMENT_CHUNK_SIZE + 5 }))?.equals(bytes.subarray(start, start + ATTACHMENT_CHUNK_SIZE + 6)));
      assert.equal(await storage.attachments.has('db', saved.digest), true);
      assert.equal(await readAll(storage, 'md5-nothing'), undefined);
      const empty = await storage.attachments.save('db', pieces(Buffer.alloc(0)), 10, tooLarge);
      assert.deepEqual(await readAll(storage, empty.digest), Buffer.alloc(0));
    });

    it('the same bytes saved twice are stored once; past the limit the save is refused and leaves nothing', async () => {
      const { storage } = ctx();
      const bytes = randomBytes(50_000);
      const first = await storage.attachments.save('db', pieces(bytes), 100_000, tooLarge);
      const second = await storage.attachments.save('db', pieces(bytes), 100_000, tooLarge);
      assert.deepEqual(first, second);
      await assert.rejects(storage.attachments.save('db', pieces(randomBytes(100_001)), 100_000, tooLarge), (error: CouchError) => error.status === 413);
      await assert.rejects(storage.attachments.save('nope', pieces(bytes), 100_000, tooLarge), (error: CouchError) => error.status === 404);
    });

    it('data a leaf names survives compaction; once no revision names it, compaction removes it', async () => {
      const { storage } = ctx();
      const saved = await storage.attachments.save('db', pieces(randomBytes(1000)), 10_000, tooLarge);
      const [one] = await storage.writeDocuments('db', [{ id: 'd', body: stubBody(saved), deleted: false }], { newEdits: true });
      assert.ok(one?.ok);
      const [two] = await storage.writeDocuments('db', [{ id: 'd', body: stubBody(saved, { v: 2 }), deleted: false, baseRev: one.rev }], { newEdits: true });
      assert.ok(two?.ok);
      await storage.compact('db', { graceMs: 0 });
      assert.equal(await storage.attachments.has('db', saved.digest), true, 'the leaf still names it');
      const [three] = await storage.writeDocuments('db', [{ id: 'd', body: {}, deleted: true, baseRev: two.rev }], { newEdits: true });
      assert.ok(three?.ok);
      await storage.compact('db');
      assert.equal(await storage.attachments.has('db', saved.digest), true, 'kept for the grace period');
      await storage.compact('db', { graceMs: 0 });
      assert.equal(await storage.attachments.has('db', saved.digest), false);
      const orphan = await storage.attachments.save('db', pieces(randomBytes(10)), 100, tooLarge);
      await storage.compact('db', { graceMs: 0 });
      assert.equal(await storage.attachments.has('db', orphan.digest), false, 'data no revision ever named goes too');
    });

    it('purging revisions releases the data they named; data another revision still names survives', async () => {
      const { storage } = ctx();
      const only = await storage.attachments.save('db', pieces(randomBytes(1000)), 10_000, tooLarge);
      const shared = await storage.attachments.save('db', pieces(randomBytes(2000)), 10_000, tooLarge);
      const both = { ...stubBody(only), _attachments: { ...stubBody(only)._attachments as JsonObject, g: (stubBody(shared)._attachments as JsonObject).f! } };
      const [one] = await storage.writeDocuments('db', [{ id: 'a', body: both, deleted: false }], { newEdits: true });
      assert.ok(one?.ok);
      const [two] = await storage.writeDocuments('db', [{ id: 'a', body: { ...both, v: 2 }, deleted: false, baseRev: one.rev }], { newEdits: true });
      assert.ok(two?.ok);
      const [other] = await storage.writeDocuments('db', [{ id: 'b', body: stubBody(shared), deleted: false }], { newEdits: true });
      assert.ok(other?.ok);
      assert.deepEqual(await storage.purgeDocuments('db', [{ id: 'a', revs: [two.rev] }]), [[two.rev]]);
      await storage.compact('db', { graceMs: 0 });
      assert.equal(await storage.attachments.has('db', only.digest), false, 'no revision names it after the purge');
      assert.equal((await readAll(storage, shared.digest))?.length, 2000, "document b's revision still names it");
      assert.deepEqual(await storage.purgeDocuments('db', [{ id: 'b', revs: [other.rev] }]), [[other.rev]]);
      await storage.compact('db', { graceMs: 0 });
      assert.equal(await storage.attachments.has('db', shared.digest), false);
    });

    it('a revision naming data that is not stored is refused; deleting the database removes its data', async () => {
      const { storage } = ctx();
      await assert.rejects(storage.writeDocuments('db', [{ id: 'x', body: stubBody({ digest: 'md5-AAAAAAAAAAAAAAAAAAAAAA==', length: 1 }), deleted: false }], { newEdits: true }));
      assert.equal(await storage.readDocument('db', 'x'), undefined);
      const saved = await storage.attachments.save('db', pieces(randomBytes(10)), 100, tooLarge);
      await storage.writeDocuments('db', [{ id: 'y', body: stubBody(saved), deleted: false }], { newEdits: true });
      await storage.deleteDatabase('db');
      await storage.createDatabase('db', {});
      assert.equal(await storage.attachments.has('db', saved.digest), false);
    });
  });
}
