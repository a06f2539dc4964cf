// Reduced view answers (from the stored partial reductions for the built-ins, from the rows for a
// JavaScript reduce) equal a reduce computed naively over the view's map rows, after random
// sequences of inserts, updates, deletes, conflicting branches (new_edits=false) and purges, with
// the index brought up to date between the steps (so the partials are maintained incrementally).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Json } from '../../src/json/json.js';
import { encode as encodeKey } from '../../src/collation/encode.js';
import { describeOnEachBackend } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';

const MAP = 'function (doc) { if (doc.g) emit(doc.short ? [doc.g] : [doc.g, doc.h, doc.n % 2], doc.n); }';
const REDUCES: Record<string, string> = { count: '_count', sum: '_sum', stats: '_stats', distinct: '_approx_count_distinct', js: 'function (keys, values, rereduce) { return sum(values); }' };

interface MapRow {
  id: string;
  key: Json;
  value: number;
}

function naiveValue(view: string, rows: readonly MapRow[]): Json {
  const values = rows.map((row) => row.value);
  const total = values.reduce((a, b) => a + b, 0);
  if (view === 'count') return rows.length;
  if (view === 'distinct') return new Set(rows.map((row) => encodeKey(row.key).toString('hex'))).size;
  if (view === 'stats') return { sum: total, count: values.length, min: Math.min(...values), max: Math.max(...values), sumsqr: values.reduce((a, b) => a + b * b, 0) };
  return total;
}

interface Query {
  level: number | 'exact';
  start?: Json;
  end?: Json;
  inclusiveEnd: boolean;
  descending: boolean;
}

/** The reduce of the rows in the query's range, grouped by the query's level, in the query's order. */
function naive(view: string, rows: readonly MapRow[], query: Query): Json[] {
  const sign = query.descending ? -1 : 1;
  const inRange = (key: Json): boolean => {
    const at = encodeKey(key);
    if (query.start !== undefined && sign * Buffer.compare(at, encodeKey(query.start)) < 0) return false;
    if (query.end === undefined) return true;
    const past = sign * Buffer.compare(at, encodeKey(query.end));
    return query.inclusiveEnd ? past <= 0 : past < 0;
  };
  const groups = new Map<string, { key: Json; rows: MapRow[] }>();
  for (const row of rows.filter((r) => inRange(r.key))) {
    const key = query.level === 'exact' ? row.key : query.level === 0 ? null : (row.key as Json[]).slice(0, query.level);
    const name = encodeKey(key).toString('hex');
    if (!groups.has(name)) groups.set(name, { key, rows: [] });
    groups.get(name)!.rows.push(row);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => sign * Buffer.compare(Buffer.from(a, 'hex'), Buffer.from(b, 'hex')))
    .map(([, group]) => ({ key: group.key, value: naiveValue(view, group.rows) }));
}

const step = fc.record({
  kind: fc.constantFrom('put', 'put', 'delete', 'conflict', 'purge'),
  id: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
  g: fc.constantFrom('p', 'q', 'r'),
  h: fc.constantFrom('x', 'y', 'z'),
  n: fc.integer({ min: -20, max: 20 }),
  short: fc.boolean(),
});
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;
const KEYS: Json[] = [['p'], ['p', 'y'], ['q'], ['q', 'x', 1], ['r', 'z'], ['s']];
const query = fc.record({
  level: fc.constantFrom<number | 'exact'>(0, 1, 2, 3, 'exact'),
  low: fc.option(fc.constantFrom(...KEYS), { nil: undefined }),
  high: fc.option(fc.constantFrom(...KEYS), { nil: undefined }),
  inclusiveEnd: fc.boolean(),
  descending: fc.boolean(),
});

async function apply(server: TestServer, db: string, s: Step, serial: number): Promise<void> {
  const body = { g: s.g, h: s.h, n: s.n, short: s.short };
  const current = await server.admin(`/${db}/${s.id}?conflicts=true`);
  const rev = current.status === 200 ? (current.body._rev as string) : undefined;
  if (s.kind === 'put') await server.admin(`/${db}/${s.id}`, { method: 'PUT', body: rev === undefined ? body : { ...body, _rev: rev } });
  else if (s.kind === 'delete' && rev !== undefined) await server.admin(`/${db}/${s.id}?rev=${rev}`, { method: 'DELETE' });
  else if (s.kind === 'conflict') {
    const branch = `${1 + (serial % 3)}-${serial.toString(16).padStart(32, '0')}`;
    await server.admin(`/${db}/_bulk_docs`, { method: 'POST', body: { docs: [{ _id: s.id, _rev: branch, ...body }], new_edits: false } });
  } else if (s.kind === 'purge' && rev !== undefined) {
    const leaves = [rev, ...((current.body._conflicts as string[] | undefined) ?? [])];
    await server.admin(`/${db}/_purge`, { method: 'POST', body: { [s.id]: [leaves[serial % leaves.length]!] } });
  }
}

function queryString(q: Query, view: string): string {
  const params = new URLSearchParams();
  if (q.level === 'exact') params.set('group', 'true');
  else if (q.level > 0) params.set('group_level', String(q.level));
  if (q.start !== undefined) params.set('start_key', JSON.stringify(q.start));
  if (q.end !== undefined) params.set('end_key', JSON.stringify(q.end));
  params.set('inclusive_end', String(q.inclusiveEnd));
  params.set('descending', String(q.descending));
  return `${view}?${params}`;
}

describeOnEachBackend('stored reductions over HTTP', (server) => {
  test('every reduce equals a reduce of the map rows after random writes, conflicts and purges', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(step, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 4 }), fc.array(query, { minLength: 3, maxLength: 6 }), async (batches, queries) => {
        const db = `reductions-${run++}`;
        assert.equal((await server().admin(`/${db}`, { method: 'PUT' })).status, 201);
        const views = Object.fromEntries(Object.entries(REDUCES).map(([name, reduce]) => [name, { map: MAP, reduce }]));
        assert.equal((await server().admin(`/${db}/_design/r`, { method: 'PUT', body: { views } })).status, 201);
        let serial = 0;
        for (const batch of batches) {
          for (const s of batch) await apply(server(), db, s, serial++);
          const rows = (await server().admin(`/${db}/_design/r/_view/count?reduce=false`)).body.rows as MapRow[];
          for (const { low, high, ...rest } of queries) {
            if (low !== undefined && high !== undefined && Buffer.compare(encodeKey(low), encodeKey(high)) > 0) continue;
            const q: Query = { ...rest, start: rest.descending ? high : low, end: rest.descending ? low : high };
            for (const view of Object.keys(REDUCES)) {
              const answer = await server().admin(`/${db}/_design/r/_view/${queryString(q, view)}`);
              assert.equal(answer.status, 200, JSON.stringify([view, q, answer.body]));
              const expected = naive(view, rows, q);
              assert.deepEqual(answer.body.rows, expected, JSON.stringify([view, q]));
            }
          }
        }
        await server().admin(`/${db}`, { method: 'DELETE' });
      }),
      { numRuns: 12 },
    );
  });
});
