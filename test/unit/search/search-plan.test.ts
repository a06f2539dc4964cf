import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseLuceneQuery } from '../../../src/search/lucene-query.js';
import { planOf } from '../../../src/search/search-plan.js';
import { sortKeysOf } from '../../../src/search/search-sort.js';
import { searchArgsOf } from '../../../src/search/search-args.js';
import type { SearchFieldType, SearchPlan } from '../../../src/storage/storage.js';

const TYPES = new Map<string, SearchFieldType>([['default', 'text'], ['title', 'text'], ['tag', 'string'], ['price', 'double'], ['isbn', 'stored']]);
const plan = (q: string, syntax: 'fts5' | 'tsquery' = 'fts5'): SearchPlan => planOf(parseLuceneQuery(q), { types: TYPES, analyzerOf: (field) => (field === 'title' ? 'english' : 'standard'), syntax });
const ALL = { includeLower: true, includeUpper: true };

describe('a Lucene query as a storage plan', () => {
  const cases: [string, SearchPlan][] = [
    ['*:*', { kind: 'all' }],
    ['dune', { kind: 'text', field: 'default', analyzer: 'standard', match: '"dune"' }],
    ['title:(dune OR "spice melange")', { kind: 'text', field: 'title', analyzer: 'english', match: '("dune") OR ("spice melange")' }],
    ['tag:sf', { kind: 'string', field: 'tag', equals: 'sf' }],
    ['tag:"science fiction"', { kind: 'string', field: 'tag', equals: 'science fiction' }],
    ['tag:s?', { kind: 'string', field: 'tag', pattern: 's?' }],
    ['tag:[a TO m}', { kind: 'string', field: 'tag', range: { lower: 'a', upper: 'm', includeLower: true, includeUpper: false } }],
    ['price:9.5', { kind: 'double', field: 'price', range: { lower: 9.5, upper: 9.5, ...ALL } }],
    ['price:[* TO 10]', { kind: 'double', field: 'price', range: { lower: undefined, upper: 10, ...ALL } }],
    ['isbn:42', { kind: 'none' }],
    ['unknown:x', { kind: 'none' }],
    ['dune AND tag:sf', { kind: 'and', parts: [{ kind: 'text', field: 'default', analyzer: 'standard', match: '"dune"' }, { kind: 'string', field: 'tag', equals: 'sf' }] }],
    ['tag:sf -price:[10 TO *]', { kind: 'not', positive: { kind: 'string', field: 'tag', equals: 'sf' }, negative: { kind: 'double', field: 'price', range: { lower: 10, upper: undefined, ...ALL } } }],
    ['-tag:sf', { kind: 'not', positive: { kind: 'all' }, negative: { kind: 'string', field: 'tag', equals: 'sf' } }],
    ['tag:a tag:b', { kind: 'or', parts: [{ kind: 'string', field: 'tag', equals: 'a' }, { kind: 'string', field: 'tag', equals: 'b' }] }],
  ];
  for (const [q, expected] of cases) test(`${q}`, () => assert.deepEqual(plan(q), expected));

  test('text leaves are written in the backend\'s syntax', () => {
    assert.deepEqual(plan('title:"desert planet"', 'tsquery'), { kind: 'text', field: 'title', analyzer: 'english', match: "'desert' <-> 'planet'" });
  });

  test('what a text field cannot answer is 400: ranges, inner wildcards; so is a number that is not one', () => {
    for (const q of ['title:[a TO b]', 'title:d?ne', 'price:cheap']) assert.throws(() => plan(q), (error: { status?: number }) => error.status === 400, q);
  });
});

describe('sort keys', () => {
  test('relevance by default, then the id', () => assert.deepEqual(sortKeysOf(undefined, TYPES), [{ by: 'score', descending: true }, { by: 'id', descending: false }]));
  test('fields by their indexed type, a suffix naming it, - for descending', () => {
    assert.deepEqual(sortKeysOf(['-price', 'tag<string>', '<score>'], TYPES), [
      { by: 'double', field: 'price', descending: true },
      { by: 'string', field: 'tag', descending: false },
      { by: 'score', descending: false },
      { by: 'id', descending: false },
    ]);
    assert.deepEqual(sortKeysOf(['-_id'], TYPES), [{ by: 'id', descending: true }]);
  });
  test('a text field or a malformed key is 400', () => {
    for (const sort of [['title'], ['price desc']]) assert.throws(() => sortKeysOf(sort, TYPES), (error: { status?: number }) => error.status === 400);
  });
});

describe('query options', () => {
  const fromQuery = (query: Record<string, string>) => searchArgsOf((name) => (query[name] === undefined ? undefined : { text: query[name]! }));
  test('defaults as CouchDB\'s', () => assert.deepEqual(fromQuery({ q: '*:*' }), { q: '*:*', limit: 25, includeDocs: false, topN: 10, update: true }));
  test('JSON-valued options from a query string', () => {
    const args = fromQuery({ q: 'x', sort: '"-price"', counts: '["tag"]', ranges: '{"price":[{"label":"cheap","max":10,"max_inclusive":false}]}', limit: '5', update: 'false' });
    assert.deepEqual([args.sort, args.counts, args.ranges, args.limit, args.update], [['-price'], ['tag'], { price: [{ label: 'cheap', max: 10, minInclusive: true, maxInclusive: false }] }, 5, false]);
  });
  const refusals: [Record<string, string>, string][] = [
    [{}, 'q parameter is mandatory'],
    [{ q: 'x', limit: '0' }, 'limit parameter must be greater than zero'],
    [{ q: 'x', limit: 'ten' }, 'limit parameter must be an integer'],
    [{ q: 'x', counts: '"tag"' }, 'counts parameter must be a list of strings'],
    [{ q: 'x', include_docs: 'yes' }, 'Invalid value for include_docs: "yes"'],
    [{ q: 'x', ranges: '{"price": 3}' }, 'range values must be lists of objects'],
  ];
  for (const [query, reason] of refusals) {
    test(`refused: ${reason}`, () => assert.throws(() => fromQuery(query), (error: { status?: number; reason?: string }) => error.status === 400 && error.reason === reason));
  }
});
