import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseLuceneQuery } from '../../../src/search/lucene-query.js';
import { tsqueryText } from '../../../src/search/tsquery.js';

describe('PostgreSQL tsquery text of a parsed query', () => {
  test('terms are quoted lexemes, phrases joined by <->, prefixes :*', () => {
    assert.equal(tsqueryText(parseLuceneQuery('t:hello'), 't'), "'hello'");
    assert.equal(tsqueryText(parseLuceneQuery('t:"big  cat"'), 't'), "'big' <-> 'cat'");
    assert.equal(tsqueryText(parseLuceneQuery('t:hel*'), 't'), "'hel':*");
  });

  test("quotes and backslashes stay inside the lexeme", () => {
    assert.equal(tsqueryText({ type: 'term', field: 't', text: "it's\\" }, 't'), "'it''s\\\\'");
  });

  test('boolean clauses become &, | and & !', () => {
    assert.equal(tsqueryText(parseLuceneQuery('t:a AND t:b'), 't'), "('a') & ('b')");
    assert.equal(tsqueryText(parseLuceneQuery('t:a t:b'), 't'), "('a') | ('b')");
    assert.equal(tsqueryText(parseLuceneQuery('+t:a -t:b'), 't'), "(('a')) & !(('b'))");
  });

  test('what a tsquery cannot say is null', () => {
    for (const q of ['u:a', 't:a u:b', 't:[a TO b]', '*:*', 't:h*o', '-t:a', 't:""']) assert.equal(tsqueryText(parseLuceneQuery(q), 't'), null, q);
  });
});
