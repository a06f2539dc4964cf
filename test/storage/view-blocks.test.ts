/**
 * The blocks of a view index (counted runs of rows with stored reductions) after random updates
 * (rows added, moved and removed, enough of them that blocks split, shrink and merge), on every
 * backend: a map query's `offset` equals a recount of the rows before its start, and a reduce
 * combining the stored block reductions with the rows between them equals a reduce of every row of
 * the range, per group, also when some stored reductions are out of date.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BACKENDS, freshBackend } from '../support/backends.js';
import type { EncodedRow, Json, ReduceLevel, RowPosition, Storage, ViewRange } from '../../src/storage/storage.js';
import { encode as encodeKey } from '../../src/collation/encode.js';
import { BLOCK_ROWS } from '../../src/storage/kit/view-blocks.js';

interface ModelRow {
  key: Json;
  value: number;
}

const key: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(null, 'a', 'b', ['a'], ['a', 1], ['b', 2, 'x']),
  fc.integer({ min: 0, max: 40 }),
  fc.tuple(fc.constantFrom('p', 'q', 'r'), fc.integer({ min: 0, max: 6 })),
);
const rows = fc.array(fc.record({ key, value: fc.integer({ min: -9, max: 9 }) }), { maxLength: 9 });
const IDS = Array.from({ length: 90 }, (_, i) => `d${String(i).padStart(2, '0')}`);
const idArb = fc.constantFrom(...IDS);
const batch = fc.record({ edits: fc.array(fc.record({ id: idArb, rows }), { minLength: 1, maxLength: 40 }), fill: fc.boolean() });
const query = fc.record({
  start: fc.option(key, { nil: undefined }),
  startDocId: fc.option(idArb, { nil: undefined }),
  end: fc.option(key, { nil: undefined }),
  inclusiveEnd: fc.boolean(),
  descending: fc.boolean(),
  level: fc.constantFrom<ReduceLevel>(0, 1, 2, 'exact'),
});
type Query = typeof query extends fc.Arbitrary<infer Q> ? Q : never;

const encodedRow = (row: ModelRow): EncodedRow => ({ view: 0, key: encodeKey(row.key), keyJson: JSON.stringify(row.key), valueJson: JSON.stringify(row.value), num: row.value });

/** -1, 0, 1 as the position (key, then id) compares with a bound (key, optional id). */
function compareTo(rowKey: Json, id: string, boundKey: Json, boundId: string | undefined): number {
  const byKey = Buffer.compare(encodeKey(rowKey), encodeKey(boundKey));
  if (byKey !== 0 || boundId === undefined) return byKey;
  return Buffer.compare(Buffer.from(id), Buffer.from(boundId));
}

function rangeOf(q: Query): ViewRange {
  return {
    view: 0,
    startKey: q.start === undefined ? undefined : encodeKey(q.start),
    startDocId: q.start === undefined ? undefined : q.startDocId,
    endKey: q.end === undefined ? undefined : encodeKey(q.end),
    inclusiveEnd: q.inclusiveEnd,
    descending: q.descending,
    skip: 0,
  };
}

function inRange(q: Query, rowKey: Json, id: string): boolean {
  const sign = q.descending ? -1 : 1;
  if (q.start !== undefined && sign * compareTo(rowKey, id, q.start, q.startDocId) < 0) return false;
  if (q.end === undefined) return true;
  const past = sign * compareTo(rowKey, id, q.end, undefined);
  return q.inclusiveEnd ? past <= 0 : past < 0;
}

function groupOf(rowKey: Json, level: ReduceLevel): Json {
  if (level === 'exact') return rowKey;
  if (level === 0) return null;
  return Array.isArray(rowKey) ? rowKey.slice(0, level) : rowKey;
}

const groupName = (rowKey: Json, level: ReduceLevel): string => encodeKey(groupOf(rowKey, level)).toString('hex');

/** Stores, as each stale block's reduction, the sum of its rows' values. */
async function fill(storage: Storage, signature: string): Promise<void> {
  for (let after: RowPosition | undefined; ; ) {
    const stale = await storage.views.staleBlocks('db', signature, 0, 'sum', 7, after);
    if (stale.length === 0) return;
    after = stale[stale.length - 1]!.at;
    const reductions = stale.map((block) => ({ at: block.at, version: block.version, valueJson: JSON.stringify(block.rows.reduce((sum, row) => sum + (row.value as number), 0)), inputSize: 1 }));
    await storage.views.storeReductions('db', signature, 0, 'sum', reductions);
  }
}

/** Sums per group from the reduction plan: stored pieces as they are, the rows between them read. */
async function plannedSums(storage: Storage, signature: string, range: ViewRange, level: ReduceLevel, used: { stored: number }): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  const add = (rowKey: Json, value: number): void => {
    const name = groupName(rowKey, level);
    sums.set(name, (sums.get(name) ?? 0) + value);
  };
  for (const piece of await storage.views.reductionPlan('db', signature, range, level, 'sum')) {
    if (piece.kind === 'stored') {
      used.stored++;
      add(JSON.parse(piece.keyJson) as Json, JSON.parse(piece.valueJson) as number);
      continue;
    }
    const read = await storage.views.rows('db', signature, { ...range, from: piece.from, to: piece.to, countOffset: false });
    for (const row of read.rows) add(row.key, row.value as number);
  }
  return sums;
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: view blocks`, () => {
    const ctx = freshBackend(backend);

    it('give offsets equal to a recount and reductions equal to a reduce of every row, after random updates', async () => {
      const { storage } = ctx();
      let run = 0;
      const used = { stored: 0 };
      await fc.assert(
        fc.asyncProperty(fc.array(batch, { minLength: 2, maxLength: 6 }), fc.array(query, { minLength: 3, maxLength: 6 }), async (batches, queries) => {
          const signature = `sig${run++}`;
          await storage.views.open('db', signature);
          const model = new Map<string, ModelRow[]>();
          // A first batch big enough that blocks split.
          const seed = IDS.map((id, i) => ({ id, rows: Array.from({ length: 1 + (i % 7) }, (_, j) => ({ key: j % 3 === 0 ? i % 11 : ['p', (i + j) % 5], value: (i * j) % 7 })) }));
          for (const [seq, { edits, fill: filled }] of [{ edits: seed, fill: true }, ...batches].entries()) {
            const last = new Map(edits.map((edit) => [edit.id, edit.rows]));
            await storage.views.update('db', signature, [...last].map(([id, own]) => ({ id, rows: own.map(encodedRow) })), seq + 1);
            for (const [id, own] of last) model.set(id, own);
            if (filled) await fill(storage, signature);
          }
          const all = [...model.entries()].flatMap(([id, own]) => own.map((row) => ({ ...row, id })));
          assert.ok(all.length > 2 * BLOCK_ROWS || batches.length < 2, 'enough rows to split blocks');
          // The whole view at level 0 always reaches blocks a later batch left alone, so every run uses stored reductions.
          const whole: Query = { start: undefined, startDocId: undefined, end: undefined, inclusiveEnd: true, descending: false, level: 0 };
          for (const q of [...queries, whole]) {
            const range = rangeOf(q);
            const answer = await storage.views.rows('db', signature, { ...range, endKey: undefined, limit: 0 });
            const before = q.start === undefined ? 0 : all.filter((row) => (q.descending ? -1 : 1) * compareTo(row.key, row.id, q.start!, q.startDocId) < 0).length;
            assert.equal(answer.offset, before, `offset ${JSON.stringify(q)}`);
            assert.equal(answer.totalRows, all.length);
            const expected = new Map<string, number>();
            for (const row of all.filter((r) => inRange(q, r.key, r.id))) expected.set(groupName(row.key, q.level), (expected.get(groupName(row.key, q.level)) ?? 0) + row.value);
            assert.deepEqual(await plannedSums(storage, signature, range, q.level, used), expected, `reduce ${JSON.stringify(q)}`);
          }
        }),
        { numRuns: backend.name === 'sqlite' ? 40 : 12 },
      );
      assert.ok(used.stored > 0, 'some stored block reductions were used');
    });

    it('store no reduction computed for a version the block no longer has', async () => {
      const { storage } = ctx();
      await storage.views.open('db', 'sig');
      const many = Array.from({ length: 3 * BLOCK_ROWS }, (_, i) => ({ id: `d${String(i).padStart(4, '0')}`, rows: [encodedRow({ key: i, value: 1 })] }));
      await storage.views.update('db', 'sig', many, 1);
      const stale = await storage.views.staleBlocks('db', 'sig', 0, 'sum', 100);
      assert.ok(stale.length >= 2);
      assert.equal(stale.reduce((sum, block) => sum + block.rows.length, 0), 3 * BLOCK_ROWS);
      await storage.views.update('db', 'sig', [{ id: 'd0000', rows: [encodedRow({ key: 0, value: 5 })] }], 2);
      await storage.views.storeReductions('db', 'sig', 0, 'sum', stale.map((block) => ({ at: block.at, version: block.version, valueJson: '0', inputSize: 1 })));
      const after = await storage.views.staleBlocks('db', 'sig', 0, 'sum', 100);
      assert.deepEqual(after.map((block) => block.rows.length), [stale[0]!.rows.length], 'only the changed first block is stale');
      assert.equal(after[0]!.rows[0]!.value, 5);
    });
  });
}
