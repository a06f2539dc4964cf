// JavaScript reduces answered from the reductions stored per block of rows equal a reduce computed
// naively over the view's map rows, for every group level and key range, after random inserts,
// updates, deletes, conflicting branches (new_edits=false) and purges over a database large enough
// that the view's rows fill several blocks; and reduce_limit still applies to stored reductions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Json } from '../../src/json/json.js';
import { encode as encodeKey } from '../../src/collation/encode.js';
import { BLOCK_ROWS } from '../../src/storage/kit/view-blocks.js';
import { describeOnEachBackend } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';

const MAP = 'function (doc) { if (doc.g !== undefined) { emit([doc.g, doc.h], doc.n); if (doc.twice) emit(doc.n, 1); } }';
const REDUCES: Record<string, string> = {
  sum: 'function (keys, values, rereduce) { return sum(values); }',
  count: 'function (keys, values, rereduce) { return rereduce ? sum(values) : values.length; }',
};
const DOCS = 3 * BLOCK_ROWS;

interface MapRow {
  id: string;
  key: Json;
  value: number;
}

interface Query {
  level: number | 'exact';
  start?: Json;
  end?: Json;
  inclusiveEnd: boolean;
  descending: boolean;
}

function naive(view: string, rows: readonly MapRow[], q: Query): Json[] {
  const sign = q.descending ? -1 : 1;
  const inRange = (key: Json): boolean => {
    const at = encodeKey(key);
    if (q.start !== undefined && sign * Buffer.compare(at, encodeKey(q.start)) < 0) return false;
    if (q.end === undefined) return true;
    const past = sign * Buffer.compare(at, encodeKey(q.end));
    return q.inclusiveEnd ? past <= 0 : past < 0;
  };
  const groups = new Map<string, { key: Json; values: number[] }>();
  for (const row of rows.filter((r) => inRange(r.key))) {
    const key = q.level === 'exact' ? row.key : q.level === 0 ? null : Array.isArray(row.key) ? row.key.slice(0, q.level) : row.key;
    const name = encodeKey(key).toString('hex');
    if (!groups.has(name)) groups.set(name, { key, values: [] });
    groups.get(name)!.values.push(row.value);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => sign * Buffer.compare(Buffer.from(a, 'hex'), Buffer.from(b, 'hex')))
    .map(([, group]) => ({ key: group.key, value: view === 'count' ? group.values.length : group.values.reduce((a, b) => a + b, 0) }));
}

const docBody = (i: number, n: number): Record<string, Json> => ({ g: `g${i % 4}`, h: i % 9, n, twice: i % 5 === 0 });
const step = fc.record({
  kind: fc.constantFrom('put', 'put', 'delete', 'conflict', 'purge'),
  doc: fc.integer({ min: 0, max: DOCS + 20 }),
  n: fc.integer({ min: -30, max: 30 }),
});
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;
const KEYS: Json[] = [['g0'], ['g1', 3], ['g2', 8], ['g3'], 0, 15, 'z'];
const query = fc.record({
  level: fc.constantFrom<number | 'exact'>(0, 0, 1, 2, 'exact'),
  low: fc.option(fc.constantFrom(...KEYS), { nil: undefined }),
  high: fc.option(fc.constantFrom(...KEYS), { nil: undefined }),
  inclusiveEnd: fc.boolean(),
  descending: fc.boolean(),
});

async function apply(server: TestServer, db: string, s: Step, serial: number): Promise<void> {
  const id = `doc${String(s.doc).padStart(4, '0')}`;
  const body = docBody(s.doc, s.n);
  const current = await server.admin(`/${db}/${id}?conflicts=true`);
  const rev = current.status === 200 ? (current.body._rev as string) : undefined;
  if (s.kind === 'put') await server.admin(`/${db}/${id}`, { method: 'PUT', body: rev === undefined ? body : { ...body, _rev: rev } });
  else if (s.kind === 'delete' && rev !== undefined) await server.admin(`/${db}/${id}?rev=${rev}`, { method: 'DELETE' });
  else if (s.kind === 'conflict') {
    const branch = `${1 + (serial % 3)}-${serial.toString(16).padStart(32, '0')}`;
    await server.admin(`/${db}/_bulk_docs`, { method: 'POST', body: { docs: [{ _id: id, _rev: branch, ...body }], new_edits: false } });
  } else if (s.kind === 'purge' && rev !== undefined) {
    const leaves = [rev, ...((current.body._conflicts as string[] | undefined) ?? [])];
    await server.admin(`/${db}/_purge`, { method: 'POST', body: { [id]: [leaves[serial % leaves.length]!] } });
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

describeOnEachBackend('JavaScript reduces from stored block reductions', (server) => {
  test('every reduce equals a reduce of the map rows after random writes, conflicts and purges', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(step, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 }), fc.array(query, { minLength: 3, maxLength: 5 }), async (batches, queries) => {
        const db = `jsblocks-${run++}`;
        assert.equal((await server().admin(`/${db}`, { method: 'PUT' })).status, 201);
        const docs = Array.from({ length: DOCS }, (_, i) => ({ _id: `doc${String(i).padStart(4, '0')}`, ...docBody(i, i % 13) }));
        assert.equal((await server().admin(`/${db}/_bulk_docs`, { method: 'POST', body: { docs } })).status, 201);
        const views = Object.fromEntries(Object.entries(REDUCES).map(([name, reduce]) => [name, { map: MAP, reduce }]));
        assert.equal((await server().admin(`/${db}/_design/r`, { method: 'PUT', body: { views } })).status, 201);
        // The first query builds the index and stores every block's reduction.
        assert.equal((await server().admin(`/${db}/_design/r/_view/sum`)).status, 200);
        let serial = 0;
        for (const batch of batches) {
          for (const s of batch) await apply(server(), db, s, serial++);
          const rows = (await server().admin(`/${db}/_design/r/_view/sum?reduce=false`)).body.rows as MapRow[];
          // The whole view twice at each level: computed (and kept) by the first query, read back by the second.
          for (const view of Object.keys(REDUCES)) {
            for (const q of [0, 1, 2, 'exact'].map((level) => ({ level, inclusiveEnd: true, descending: level === 1 }) as Query)) {
              for (let again = 0; again < 2; again++) {
                const whole = await server().admin(`/${db}/_design/r/_view/${queryString(q, view)}`);
                assert.deepEqual(whole.body.rows, naive(view, rows, q), JSON.stringify([view, q, again]));
              }
            }
          }
          for (const { low, high, ...rest } of queries) {
            if (low !== undefined && high !== undefined && Buffer.compare(encodeKey(low), encodeKey(high)) > 0) continue;
            const q: Query = { ...rest, start: rest.descending ? high : low, end: rest.descending ? low : high };
            for (const view of Object.keys(REDUCES)) {
              const answer = await server().admin(`/${db}/_design/r/_view/${queryString(q, view)}`);
              assert.equal(answer.status, 200, JSON.stringify([view, q, answer.body]));
              assert.deepEqual(answer.body.rows, naive(view, rows, q), JSON.stringify([view, q]));
            }
          }
        }
        await server().admin(`/${db}`, { method: 'DELETE' });
      }),
      { numRuns: 6 },
    );
  });

  test('a stored block reduction that does not shrink answers the reduce_overflow_error row', async () => {
    assert.equal((await server().admin('/jsgrows', { method: 'PUT' })).status, 201);
    const grows = 'function (keys, values, rereduce) { var out = []; for (var i = 0; i < 1000; i++) out.push("wazzap"); return out; }';
    const views = { grows: { map: 'function (doc) { emit(doc.i, doc.i); }', reduce: grows } };
    assert.equal((await server().admin('/jsgrows/_design/app', { method: 'PUT', body: { views } })).status, 201);
    const docs = Array.from({ length: DOCS }, (_, i) => ({ i }));
    assert.equal((await server().admin('/jsgrows/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    for (let round = 0; round < 2; round++) {
      const answer = await server().admin('/jsgrows/_design/app/_view/grows');
      assert.equal(answer.status, 200);
      assert.equal(answer.body.rows.length, 1);
      assert.equal(answer.body.rows[0].error, 'reduce_overflow_error', JSON.stringify(answer.body).slice(0, 200));
    }
  });
});

// The sandbox's log() lines are logged at info: they show which rows each reduce call was given.
describeOnEachBackend(
  'JavaScript block reductions kept by the index update',
  (server) => {
    test('the index update reduces the blocks of JavaScript-reduced views, and a reduce query then only rereduces', async () => {
      assert.equal((await server().admin('/jsfilled', { method: 'PUT' })).status, 201);
      const logged = 'function (keys, values, rereduce) { if (!rereduce) log("block-reduced " + values.length); return sum(values); }';
      const views = { total: { map: 'function (doc) { emit(doc.i, doc.i); }', reduce: logged } };
      assert.equal((await server().admin('/jsfilled/_design/app', { method: 'PUT', body: { views } })).status, 201);
      const docs = Array.from({ length: DOCS }, (_, i) => ({ i }));
      const reducedRows = (): number => server().logs.filter((line) => line.includes('block-reduced')).reduce((total, line) => total + Number(/block-reduced (\d+)/.exec(line)![1]), 0);
      const before = reducedRows();
      assert.equal((await server().admin('/jsfilled/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
      assert.equal((await server().admin('/jsfilled/_design/app/_view/total?reduce=false&limit=1')).status, 200);
      assert.equal(reducedRows() - before, DOCS, 'the index update (the map query waits for it) reduces every row once, by block');
      const answer = await server().admin('/jsfilled/_design/app/_view/total');
      assert.deepEqual(answer.body.rows, [{ key: null, value: (DOCS * (DOCS - 1)) / 2 }]);
      assert.equal(reducedRows() - before, DOCS, 'the whole-view reduce combines the stored block reductions');
    });

    test('a whole-view reduce is kept, at each group level, until the view changes: a later query calls no reduce at all', async () => {
      assert.equal((await server().admin('/jskept', { method: 'PUT' })).status, 201);
      const logged = 'function (keys, values, rereduce) { log("kept-reduce " + rereduce); return sum(values); }';
      const views = { total: { map: 'function (doc) { emit(doc.i, doc.i); }', reduce: logged } };
      assert.equal((await server().admin('/jskept/_design/app', { method: 'PUT', body: { views } })).status, 201);
      const docs = Array.from({ length: DOCS }, (_, i) => ({ _id: `d${i}`, i }));
      assert.equal((await server().admin('/jskept/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
      const calls = (): number => server().logs.filter((line) => line.includes('kept-reduce')).length;
      const total = (n: number): Json => [{ key: null, value: (n * (n - 1)) / 2 }];
      assert.deepEqual((await server().admin('/jskept/_design/app/_view/total')).body.rows, total(DOCS));
      const afterFirst = calls();
      assert.deepEqual((await server().admin('/jskept/_design/app/_view/total')).body.rows, total(DOCS));
      assert.equal(calls(), afterFirst, 'the kept value answers without a reduce call');
      const grouped = (await server().admin('/jskept/_design/app/_view/total?group=true&limit=3')).body.rows;
      assert.deepEqual(grouped, [0, 1, 2].map((i) => ({ key: i, value: i })));
      const groupCalls = calls();
      assert.deepEqual((await server().admin('/jskept/_design/app/_view/total?group=true')).body.rows.length, DOCS);
      const keptGroups = calls();
      assert.deepEqual((await server().admin('/jskept/_design/app/_view/total?group=true&skip=1&limit=2')).body.rows, [1, 2].map((i) => ({ key: i, value: i })));
      assert.equal(calls(), keptGroups, 'the kept groups answer a later page without a reduce call');
      assert.ok(keptGroups > groupCalls, 'a query with a limit and nothing kept computes only its page; one without computes and keeps all groups');
      assert.deepEqual((await server().admin('/jskept/_design/app/_view/total?descending=true')).body.rows, total(DOCS));
      assert.equal((await server().admin('/jskept/extra', { method: 'PUT', body: { i: DOCS } })).status, 201);
      assert.deepEqual((await server().admin('/jskept/_design/app/_view/total')).body.rows, total(DOCS + 1), 'a write drops the kept value');
      const removed = await server().admin('/jskept/d1');
      assert.equal((await server().admin(`/jskept/d1?rev=${removed.body._rev as string}`, { method: 'DELETE' })).status, 200);
      assert.deepEqual((await server().admin('/jskept/_design/app/_view/total')).body.rows, [{ key: null, value: (DOCS * (DOCS + 1)) / 2 - 1 }], 'and so does a delete');
    });
  },
  '[log]\nlevel = info',
);
