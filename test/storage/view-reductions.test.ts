/**
 * The stored partial reductions of a view index equal a reduce computed naively over every row,
 * after random sequences of document updates (rows added, changed, removed), for every group level,
 * key ranges (document-id bounds, inclusive_end false, descending), skip and limit, on every backend.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BACKENDS, freshBackend } from '../support/backends.js';
import type { EncodedRow, Json, ReduceLevel, ViewAggregate, ViewRange } from '../../src/storage/storage.js';
import { encode as encodeKey } from '../../src/collation/encode.js';

interface ModelRow {
  key: Json;
  value: Json;
  view: number;
}

const KEY_POOL: Json[] = [null, false, 1, 2.5, 'a', 'b', [], ['a'], ['a', 1], ['a', 1, 'x'], ['a', 1, 'x', 0], ['a', 2], ['b'], ['b', 'c', null], [['a'], 1], { k: 1 }];
const key = fc.constantFrom(...KEY_POOL);
const value = fc.oneof(fc.integer({ min: -50, max: 50 }), fc.constant('text' as Json));
const modelRow = fc.record({ key, value, view: fc.constantFrom(0, 1) });
const edit = fc.record({ id: fc.constantFrom('d1', 'd2', 'd3', 'd4', 'd5', 'd6'), rows: fc.array(modelRow, { maxLength: 4 }) });
const docId = fc.option(fc.constantFrom('d1', 'd3', 'd6'), { nil: undefined });
const query = fc.record({
  level: fc.constantFrom<ReduceLevel>(0, 1, 2, 3, 'exact'),
  start: fc.option(key, { nil: undefined }),
  end: fc.option(key, { nil: undefined }),
  startDocId: docId,
  endDocId: docId,
  inclusiveEnd: fc.boolean(),
  descending: fc.boolean(),
  skip: fc.constantFrom(0, 0, 1, 2),
  limit: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
});

const encodedRow = (row: ModelRow): EncodedRow => ({ view: row.view, key: encodeKey(row.key), keyJson: JSON.stringify(row.key), valueJson: JSON.stringify(row.value), num: typeof row.value === 'number' ? row.value : null });

function compareAt(key: Buffer, id: string, boundKey: Buffer, boundId: string | undefined): number {
  return Buffer.compare(key, boundKey) || (boundId === undefined ? 0 : id < boundId ? -1 : id > boundId ? 1 : 0);
}

function inRange(range: ViewRange, key: Buffer, id: string): boolean {
  const sign = range.descending ? -1 : 1;
  if (range.startKey !== undefined && sign * compareAt(key, id, range.startKey, range.startDocId) < 0) return false;
  if (range.endKey === undefined) return true;
  const past = sign * compareAt(key, id, range.endKey, range.endDocId);
  return range.inclusiveEnd ? past <= 0 : past < 0;
}

function groupKey(key: Json, level: ReduceLevel): Json {
  if (level === 'exact') return key;
  if (level === 0) return null;
  return Array.isArray(key) ? key.slice(0, level) : key;
}

/** The reduce of every row of the model in the range, grouped as the level says. */
function naive(model: Map<string, ModelRow[]>, range: ViewRange, level: ReduceLevel): ViewAggregate[] {
  const groups = new Map<string, { key: Json; rows: ModelRow[] }>();
  for (const [id, rows] of model) {
    for (const row of rows) {
      if (row.view !== range.view || !inRange(range, encodeKey(row.key), id)) continue;
      const group = groupKey(row.key, level);
      const name = encodeKey(group).toString('hex');
      if (!groups.has(name)) groups.set(name, { key: group, rows: [] });
      groups.get(name)!.rows.push(row);
    }
  }
  const ordered = [...groups.entries()].sort(([a], [b]) => (range.descending ? -1 : 1) * Buffer.compare(Buffer.from(a, 'hex'), Buffer.from(b, 'hex')));
  const all = ordered.map(([, group]) => {
    const numbers = group.rows.map((row) => row.value).filter((v): v is number => typeof v === 'number');
    return {
      key: group.key,
      count: group.rows.length,
      numbers: numbers.length,
      sum: numbers.reduce((a, b) => a + b, 0),
      min: numbers.length === 0 ? null : Math.min(...numbers),
      max: numbers.length === 0 ? null : Math.max(...numbers),
      sumsqr: numbers.reduce((a, b) => a + b * b, 0),
      distinct: new Set(group.rows.map((row) => encodeKey(row.key).toString('hex'))).size,
    };
  });
  if (level === 0) return all.length === 0 ? [] : all;
  return all.slice(range.skip, range.limit === undefined ? undefined : range.skip + range.limit);
}

type Query = typeof query extends fc.Arbitrary<infer Q> ? Q : never;

function rangeOf(q: Query): ViewRange {
  return {
    view: 0,
    startKey: q.start === undefined ? undefined : encodeKey(q.start),
    startDocId: q.start === undefined ? undefined : q.startDocId,
    endKey: q.end === undefined ? undefined : encodeKey(q.end),
    endDocId: q.end === undefined ? undefined : q.endDocId,
    inclusiveEnd: q.inclusiveEnd,
    descending: q.descending,
    skip: q.level === 0 ? 0 : q.skip,
    limit: q.level === 0 ? undefined : q.limit,
  };
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: stored reductions`, () => {
    const ctx = freshBackend(backend);

    it('equal a reduce over every row after random updates, for every level and range', async () => {
      const { storage } = ctx();
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(fc.array(edit, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }), fc.array(query, { minLength: 4, maxLength: 8 }), async (batches, queries) => {
          const signature = `sig${run++}`;
          await storage.views.open('db', signature);
          const model = new Map<string, ModelRow[]>();
          for (const [seq, batch] of batches.entries()) {
            // One update holds each document once, as the indexer's batches do (its last change).
            const last = new Map(batch.map((change) => [change.id, change.rows]));
            await storage.views.update('db', signature, [...last].map(([id, rows]) => ({ id, rows: rows.map(encodedRow) })), seq + 1);
            for (const [id, rows] of last) model.set(id, rows);
          }
          for (const q of queries) {
            const range = rangeOf(q);
            const stored = (await storage.views.reduce('db', signature, range, q.level))!.filter((group) => group.count > 0);
            const expected = naive(model, range, q.level);
            assert.deepEqual(stored.map((group) => (q.level === 0 ? { ...group, key: null } : group)), expected.map((group) => (q.level === 0 ? { ...group, key: null } : group)), JSON.stringify(q));
          }
          const rows = [...model.values()].flat().filter((row) => row.view === 1).length;
          assert.equal((await storage.views.rows('db', signature, { view: 1, inclusiveEnd: true, descending: false, skip: 0, limit: 0 })).totalRows, rows);
        }),
        { numRuns: backend.name === 'sqlite' ? 150 : 40 },
      );
    });

    it('answer nothing for a group level deeper than the stored prefixes (the rows are reduced instead)', async () => {
      const { storage } = ctx();
      await storage.views.open('db', 'sig');
      assert.equal(await storage.views.reduce('db', 'sig', { view: 0, inclusiveEnd: true, descending: false, skip: 0 }, 4), undefined);
    });
  });
}
