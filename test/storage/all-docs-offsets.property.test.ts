/**
 * `offset` and `total_rows` of `_all_docs`, read from the counted id blocks, equal a full
 * recomputation from the live documents themselves, after random creations, updates, deletions,
 * conflicts (replicated branches, a deleted winner uncovering a live loser), purges, compactions,
 * and bulk runs that split blocks, for random start and end keys, `descending`, `inclusive_end`,
 * `skip` and `limit`, on every backend. The database keeps its state from one run to the next, so
 * later runs start from blocks earlier runs split and emptied.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BACKENDS, freshBackend } from '../support/backends.js';
import type { DocumentEdit, RangeOptions, Storage } from '../../src/storage/storage.js';

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Seeded documents: more than one block holds, so offsets cross blocks from the first run. */
const SEEDED = Array.from({ length: 4500 }, (_, i) => `m${String((i * 7919) % 4500).padStart(4, '0')}`);
/** Ids the operations pick from: seeded ones, new ones around and between them, design documents, non-ASCII. */
const POOL = [
  ...Array.from({ length: 12 }, (_, i) => SEEDED[i * 373]!),
  '', 'a', 'm', 'm2250x', 'm4499', 'n', '_design/d', '_design/e', 'é', 'z😀', 'z\uffff', 'zz',
];
/**
 * Prefixes of the bulk runs: new ids below the seeded ones ('b') or between two of them ('m1x'),
 * which fill one block until it splits, and seeded ids ('m2': m2000 to m2699) deleted and created
 * again in runs that empty blocks.
 */
const PREFIXES = ['b', 'm1x', 'm2'];

const rev = (gen: number, branch: string): string => `${gen}-${branch}${'0'.repeat(31)}`;
/** A replicated revision path of `branch` up to generation `gen`, from the common root `1-a…`. */
const path = (gen: number, branch: string): string[] =>
  Array.from({ length: gen }, (_, i) => (gen - i === 1 ? rev(1, 'a') : rev(gen - i, branch)));

const idArb = fc.constantFrom(...POOL);
const operation = fc.oneof(
  // One replicated batch: each edit extends branch a or b of its document (b conflicts with a), maybe deleting.
  fc.record({
    kind: fc.constant('replicate' as const),
    edits: fc.array(fc.record({ id: idArb, branch: fc.constantFrom('a', 'b'), gen: fc.integer({ min: 1, max: 6 }), deleted: fc.boolean() }), { minLength: 1, maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant('edit' as const), ids: fc.uniqueArray(idArb, { minLength: 1, maxLength: 6 }), deleted: fc.boolean() }),
  fc.record({ kind: fc.constant('purge' as const), ids: fc.uniqueArray(idArb, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('bulk' as const), prefix: fc.constantFrom(...PREFIXES), count: fc.integer({ min: 50, max: 1400 }), deleted: fc.boolean() }),
  fc.constant({ kind: 'compact' as const }),
);
type Operation = typeof operation extends fc.Arbitrary<infer O> ? O : never;

const keyArb = fc.option(fc.oneof(idArb, fc.constantFrom('b', 'b5', 'm1', 'm10', 'm3', 'm35', '\u0001', '\uffff')), { nil: undefined });
const query = fc.record({
  startKey: keyArb,
  endKey: keyArb,
  descending: fc.boolean(),
  inclusiveEnd: fc.boolean(),
  skip: fc.constantFrom(0, 0, 1, 3, 1500, 6000),
  limit: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
});

async function apply(storage: Storage, op: Operation): Promise<void> {
  switch (op.kind) {
    case 'replicate': {
      const edits: DocumentEdit[] = op.edits.map((e) => ({ id: e.id, body: { g: e.gen }, deleted: e.deleted, revPath: path(e.gen, e.branch) }));
      await storage.writeDocuments('db', edits, { newEdits: false });
      return;
    }
    case 'edit': {
      // Updates the winner (a deletion, or a new body), or creates the document when it has none.
      const found = await storage.lookupDocuments('db', op.ids, false);
      const edits = op.ids.map((id, i) => {
        const current = found[i];
        const baseRev = current === undefined || current.deleted ? undefined : current.rev;
        return { id, body: { edited: true }, deleted: op.deleted && baseRev !== undefined, baseRev };
      });
      await storage.writeDocuments('db', edits, { newEdits: true });
      return;
    }
    case 'purge': {
      const found = await storage.lookupDocuments('db', op.ids, false);
      const requests = op.ids.flatMap((id, i) => (found[i] === undefined ? [] : [{ id, revs: [found[i]!.rev] }]));
      await storage.purgeDocuments('db', requests);
      return;
    }
    case 'bulk': {
      // Creates (or, deleted, deletes) a run of ids under one prefix in one write.
      const ids = Array.from({ length: op.count }, (_, i) => `${op.prefix}${String(i).padStart(3, '0')}`);
      const found = await storage.lookupDocuments('db', ids, false);
      const edits = ids.flatMap((id, i): DocumentEdit[] => {
        const current = found[i];
        const live = current !== undefined && !current.deleted;
        if (op.deleted) return live ? [{ id, body: {}, deleted: true, baseRev: current.rev }] : [];
        return live ? [] : [{ id, body: { bulk: true }, deleted: false }];
      });
      await storage.writeDocuments('db', edits, { newEdits: true });
      return;
    }
    case 'compact':
      await storage.compact('db');
  }
}

/** The rows and offset `_all_docs` must answer, computed from the sorted live ids. */
function recomputed(live: readonly string[], q: RangeOptions): { offset: number; ids: string[] } {
  const ordered = q.descending === true ? [...live].reverse() : live;
  const sign = q.descending === true ? -1 : 1;
  const afterStart = (id: string) => q.startKey === undefined || sign * byBytes(id, q.startKey) >= 0;
  const beforeEnd = (id: string) => {
    if (q.endKey === undefined) return true;
    const order = sign * byBytes(id, q.endKey);
    return q.inclusiveEnd === false ? order < 0 : order <= 0;
  };
  const before = ordered.filter((id) => !afterStart(id)).length;
  const range = ordered.filter((id) => afterStart(id) && beforeEnd(id));
  const skip = q.skip ?? 0;
  const ids = range.slice(skip, q.limit === undefined ? undefined : skip + q.limit);
  return { offset: before + Math.min(skip, range.length), ids };
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: _all_docs offsets and total_rows, property`, () => {
    const ctx = freshBackend(backend);

    it('equal a full recomputation after random writes, conflicts, purges and compactions', async () => {
      const { storage } = ctx();
      for (let start = 0; start < SEEDED.length; start += 1000) {
        await storage.writeDocuments('db', SEEDED.slice(start, start + 1000).map((id) => ({ id, body: {}, deleted: false })), { newEdits: true });
      }
      await fc.assert(
        fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 5 }), fc.array(query, { minLength: 3, maxLength: 6 }), async (ops, queries) => {
          for (const op of ops) await apply(storage, op);
          const all = await storage.listDocuments('db', { countOffset: false });
          const live = all.rows.map((row) => row.id).sort(byBytes);
          assert.deepEqual(all.rows.map((row) => row.id), live, 'ids in byte order');
          assert.equal((await storage.databaseInfo('db'))?.docCount, live.length);
          for (const q of queries) {
            const answer = await storage.listDocuments('db', q);
            const expected = recomputed(live, q);
            assert.equal(answer.totalRows, live.length, `total_rows of ${JSON.stringify(q)}`);
            assert.equal(answer.offset, expected.offset, `offset of ${JSON.stringify(q)}`);
            assert.deepEqual(answer.rows.map((row) => row.id), expected.ids, `rows of ${JSON.stringify(q)}`);
          }
        }),
        { numRuns: backend.name === 'sqlite' ? 80 : 25 },
      );
    });
  });
}
