/**
 * `_all_docs` offsets come from live documents counted per block of ids, kept by SQLite's writer
 * (kit/id-blocks.ts) and PostgreSQL's triggers (postgres-id-blocks.ts). After random creations, deletions,
 * recreations, purges and more documents than one block holds, every offset must still equal the
 * count of live ids before the start key, computed here from the documents themselves.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, freshBackend, OPEN_SECURITY } from '../support/backends.js';
import type { Storage } from '../../src/storage/storage.js';

/** A small deterministic generator (mulberry32): a failing run can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Writes `ids` in batches; answers id → rev. */
async function create(storage: Storage, db: string, ids: readonly string[]): Promise<Map<string, string>> {
  const revs = new Map<string, string>();
  for (let start = 0; start < ids.length; start += 700) {
    const batch = ids.slice(start, start + 700).map((id) => ({ id, body: { n: id.length }, deleted: false }));
    for (const result of await storage.writeDocuments(db, batch, { newEdits: true })) {
      assert.ok(result.ok);
      revs.set(result.id, result.rev);
    }
  }
  return revs;
}

/** Checks the offset of many start keys, both directions, against the live ids. */
async function checkOffsets(storage: Storage, db: string, live: Set<string>, next: () => number): Promise<void> {
  const sorted = [...live].sort(byBytes);
  const probes = [...Array.from({ length: 25 }, () => sorted[Math.floor(next() * sorted.length)]!), 'a', 'k5', 'zzz', '', 'k'];
  for (const key of probes) {
    const below = sorted.filter((id) => byBytes(id, key) < 0).length;
    const above = sorted.filter((id) => byBytes(id, key) > 0).length;
    const ascending = await storage.listDocuments(db, { startKey: key, limit: 1 });
    assert.equal(ascending.offset, below, `offset of ${JSON.stringify(key)}`);
    assert.equal(ascending.totalRows, sorted.length);
    const descending = await storage.listDocuments(db, { startKey: key, limit: 1, descending: true });
    assert.equal(descending.offset, above, `descending offset of ${JSON.stringify(key)}`);
  }
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: _all_docs offsets from counted id blocks`, () => {
    const ctx = freshBackend(backend);

    it('equal the live ids before the start key after creations, deletions, recreations and purges past a block split', async () => {
      const { storage } = ctx();
      const next = random(33);
      const ids = Array.from({ length: 6000 }, (_, i) => `k${Math.floor(next() * 1e9).toString(36)}-${i}`);
      const revs = await create(storage, 'db', ids);
      const live = new Set(ids);
      await checkOffsets(storage, 'db', live, next);

      const doomed = ids.filter(() => next() < 0.3);
      for (let start = 0; start < doomed.length; start += 500) {
        const batch = doomed.slice(start, start + 500).map((id) => ({ id, body: {}, deleted: true, baseRev: revs.get(id) }));
        for (const result of await storage.writeDocuments('db', batch, { newEdits: true })) {
          assert.ok(result.ok);
          revs.set(result.id, result.rev);
          live.delete(result.id);
        }
      }
      await checkOffsets(storage, 'db', live, next);

      const revived = doomed.filter(() => next() < 0.5);
      for (const result of await storage.writeDocuments('db', revived.map((id) => ({ id, body: { back: true }, deleted: false, baseRev: revs.get(id) })), { newEdits: true })) {
        assert.ok(result.ok);
        revs.set(result.id, result.rev);
        live.add(result.id);
      }
      const purged = [...live].filter(() => next() < 0.05);
      await storage.purgeDocuments('db', purged.map((id) => ({ id, revs: [revs.get(id)!] })));
      for (const id of purged) live.delete(id);
      await checkOffsets(storage, 'db', live, next);
      assert.equal((await storage.databaseInfo('db'))?.docCount, live.size);
    });

    it('start from zero again in a database deleted and created anew', async () => {
      const { storage } = ctx();
      await create(storage, 'db', Array.from({ length: 3000 }, (_, i) => `k${String(i).padStart(5, '0')}`));
      assert.equal((await storage.listDocuments('db', { startKey: 'k02000', limit: 1 })).offset, 2000);
      assert.ok(await storage.deleteDatabase('db'));
      assert.ok(await storage.createDatabase('db', OPEN_SECURITY));
      await create(storage, 'db', ['k00005', 'k03000']);
      const again = await storage.listDocuments('db', { startKey: 'k02000', limit: 1 });
      assert.equal(again.offset, 1);
      assert.deepEqual(again.rows.map((row) => row.id), ['k03000']);
    });
  });
}
