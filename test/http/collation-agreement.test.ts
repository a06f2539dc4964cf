/**
 * One collation over HTTP: for fields holding values of every type (non-BMP strings, accents in both
 * normal forms, ignorable characters, case, -0 and 1.0), a `_find` read through a json index, the
 * same `_find` over a database without one, a `_changes?filter=_selector` feed and a view emitting
 * the field all pick the same documents, in the same order where there is one; on every backend.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { Json } from '../../src/json/json.js';
import { createIndex, findIds, mangoServer, seed, SERVER_BACKENDS } from '../support/mango.js';
import type { TestServer } from '../support/server.js';

const CHOSEN: Json[] = [
  '\u{1F600}', '\uFF21', 'a', 'A', 'b', 'B', '\u00e9', 'e\u0301', 'c', 'c\u200b', '', ' ', '0', 'Z', '\u00df', 'ss', '\u4e2d', '\u{20000}', '\uffff',
  -0, 0, 1, 1.0, 1.5, -1e10, 1e300, -Number.MIN_VALUE, null, true, false,
  [], ['a'], ['A', 1], [['\u{1F600}']], {}, { a: 1 }, { b: '\u{1F600}' }, { a: 1, b: 2 },
];
/** Values fast-check draws (a fixed seed: every run reads the same documents), free of NUL, which PostgreSQL's jsonb refuses. */
const DRAWN = fc.sample(fc.jsonValue({ maxDepth: 2 }), { numRuns: 40, seed: 40 }).filter((value) => !JSON.stringify(value).includes('\\u0000')) as Json[];
const VALUES = [...CHOSEN, ...DRAWN];
const DOCS = VALUES.map((f, i) => ({ _id: `d${String(i).padStart(3, '0')}`, f }));
const BOUNDS: Json[] = ['\uFF21', '\u{1F600}', 'b', '\u00e9', 'c', '', 1, -0, null, false, [], ['A', 1], {}, { a: 1 }];
const OPERATORS = ['$lt', '$lte', '$gt', '$gte', '$eq'] as const;
type Operator = (typeof OPERATORS)[number];

const MAP = 'function (doc) { if ("f" in doc) emit(doc.f, null); }';

/** The ids a view gives for the range the operator names, in the view's order. */
async function viewIds(server: TestServer, operator: Operator, bound: Json): Promise<string[]> {
  const key = encodeURIComponent(JSON.stringify(bound));
  const query = {
    $lt: `endkey=${key}&inclusive_end=false`,
    $lte: `endkey=${key}`,
    $gt: `descending=true&endkey=${key}&inclusive_end=false`,
    $gte: `descending=true&endkey=${key}`,
    $eq: `key=${key}`,
  }[operator];
  const res = await server.admin(`/indexed/_design/keys/_view/f?${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const ids = res.body.rows.map((row: { id: string }) => row.id);
  return operator === '$gt' || operator === '$gte' ? ids.reverse() : ids;
}

async function changedIds(server: TestServer, selector: object): Promise<string[]> {
  const res = await server.admin('/plain/_changes?filter=_selector', { method: 'POST', body: { selector } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.results.map((row: { id: string }) => row.id);
}

for (const backend of SERVER_BACKENDS) {
  describe(`${backend}: indexed and unindexed _find, _selector filters and views collate alike`, () => {
    const server = mangoServer(backend);
    before(async () => {
      await seed(server(), 'indexed', DOCS);
      await seed(server(), 'plain', DOCS);
      await createIndex(server(), 'indexed', { index: { fields: ['f'] }, ddoc: 'by-f', name: 'f' });
      assert.equal((await server().admin('/indexed/_design/keys', { method: 'PUT', body: { views: { f: { map: MAP } } } })).status, 201);
    });

    for (const operator of OPERATORS) {
      test(`${operator}: every bound, with a sort on the field`, async () => {
        for (const bound of BOUNDS) {
          const selector = { f: { [operator]: bound } };
          const context = `${JSON.stringify(selector)}`;
          const throughIndex = await findIds(server(), 'indexed', { selector, sort: [{ f: 'asc' }], use_index: 'by-f', limit: 1000 });
          const descending = await findIds(server(), 'indexed', { selector, sort: [{ f: 'desc' }], use_index: 'by-f', limit: 1000 });
          const scanned = await findIds(server(), 'plain', { selector, limit: 1000 });
          const inView = await viewIds(server(), operator, bound);
          assert.deepEqual(throughIndex, inView, `index vs view: ${context}`);
          assert.deepEqual([...descending].reverse().sort(), [...throughIndex].sort(), `descending holds the same: ${context}`);
          assert.deepEqual([...scanned].sort(), [...throughIndex].sort(), `index vs no index: ${context}`);
          assert.deepEqual((await changedIds(server(), selector)).sort(), [...scanned].sort(), `_selector filter: ${context}`);
        }
      });
    }

    test('the case of issue 40: $lt "\\uFF21" finds the emoji with and without the index', async () => {
      const selector = { f: { $lt: '\uFF21' } };
      const emoji = DOCS.find((doc) => doc.f === '\u{1F600}')!._id;
      assert.ok((await findIds(server(), 'indexed', { selector, use_index: 'by-f', limit: 1000 })).includes(emoji));
      assert.ok((await findIds(server(), 'plain', { selector, limit: 1000 })).includes(emoji));
    });

    test('a sort through the index is the view\'s order of every document', async () => {
      const sorted = await findIds(server(), 'indexed', { selector: { f: { $gte: null } }, sort: ['f'], use_index: 'by-f', limit: 1000 });
      const view = await server().admin('/indexed/_design/keys/_view/f');
      assert.deepEqual(sorted, view.body.rows.map((row: { id: string }) => row.id));
      assert.equal(sorted.length, DOCS.length);
    });
  });
}
