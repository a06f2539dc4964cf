import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { fts5Match } from '../../../src/search/fts5-match.js';
import { DEFAULT_FIELD, LuceneSyntaxError, parseLuceneQuery, type SearchQuery } from '../../../src/search/lucene-query.js';

const term = (field: string, text: string): SearchQuery => ({ type: 'term', field, text });

describe('the Lucene query parser', () => {
  test('a bare word searches the default field; field:word searches that field', () => {
    assert.deepEqual(parseLuceneQuery('hello'), term(DEFAULT_FIELD, 'hello'));
    assert.deepEqual(parseLuceneQuery('title:hello'), term('title', 'hello'));
  });

  test('*:* matches everything', () => {
    assert.deepEqual(parseLuceneQuery('*:*'), { type: 'all' });
  });

  test('phrases keep their words together and take a field', () => {
    assert.deepEqual(parseLuceneQuery('title:"hello there"'), { type: 'phrase', field: 'title', text: 'hello there' });
  });

  test('words side by side are optional clauses (OR is the default operator)', () => {
    assert.deepEqual(parseLuceneQuery('a b'), { type: 'bool', clauses: [{ occur: 'should', query: term('default', 'a') }, { occur: 'should', query: term('default', 'b') }] });
  });

  test('AND makes both neighbours required, as Lucene classic parser', () => {
    for (const q of ['a AND b', 'a && b']) {
      assert.deepEqual(parseLuceneQuery(q), { type: 'bool', clauses: [{ occur: 'must', query: term('default', 'a') }, { occur: 'must', query: term('default', 'b') }] });
    }
  });

  test('+ requires, - NOT and ! prohibit', () => {
    assert.deepEqual(parseLuceneQuery('+a -b'), { type: 'bool', clauses: [{ occur: 'must', query: term('default', 'a') }, { occur: 'must_not', query: term('default', 'b') }] });
    assert.deepEqual(parseLuceneQuery('a NOT b'), parseLuceneQuery('a !b'));
    assert.deepEqual(parseLuceneQuery('-b'), { type: 'bool', clauses: [{ occur: 'must_not', query: term('default', 'b') }] });
  });

  test('parentheses group, and a field applies to the whole group', () => {
    assert.deepEqual(parseLuceneQuery('cat:(a OR b) AND c'), {
      type: 'bool',
      clauses: [
        { occur: 'must', query: { type: 'bool', clauses: [{ occur: 'should', query: term('cat', 'a') }, { occur: 'should', query: term('cat', 'b') }] } },
        { occur: 'must', query: term('default', 'c') },
      ],
    });
  });

  test('wildcards and escapes', () => {
    assert.deepEqual(parseLuceneQuery('title:hel*'), { type: 'wildcard', field: 'title', pattern: 'hel*' });
    assert.deepEqual(parseLuceneQuery('te?t'), { type: 'wildcard', field: 'default', pattern: 'te?t' });
    assert.deepEqual(parseLuceneQuery('a\\:b'), term('default', 'a:b'));
  });

  test('inclusive, exclusive and open ranges', () => {
    assert.deepEqual(parseLuceneQuery('price:[1 TO 10]'), { type: 'range', field: 'price', lower: '1', upper: '10', includeLower: true, includeUpper: true });
    assert.deepEqual(parseLuceneQuery('price:{1 TO 10]'), { type: 'range', field: 'price', lower: '1', upper: '10', includeLower: false, includeUpper: true });
    assert.deepEqual(parseLuceneQuery('price:[* TO 10}'), { type: 'range', field: 'price', lower: null, upper: '10', includeLower: true, includeUpper: false });
  });

  test('a boost is accepted and does not change the match', () => {
    assert.deepEqual(parseLuceneQuery('a^2 b'), parseLuceneQuery('a b'));
  });

  test('words that name Object.prototype members are plain terms, not operators', () => {
    for (const word of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      assert.deepEqual(parseLuceneQuery(word), parseLuceneQuery(`default:${word}`), word);
    }
  });

  test('fuzzy terms take Lucene\'s edits: 2 by default, at most 2, a similarity below 1 by the term\'s length', () => {
    const fuzzy = (field: string, text: string, edits: number) => ({ type: 'fuzzy', field, text, edits });
    assert.deepEqual(parseLuceneQuery('title:roam~'), fuzzy('title', 'roam', 2));
    assert.deepEqual(parseLuceneQuery('roam~1'), fuzzy(DEFAULT_FIELD, 'roam', 1));
    assert.deepEqual(parseLuceneQuery('roam~5'), fuzzy(DEFAULT_FIELD, 'roam', 2));
    assert.deepEqual(parseLuceneQuery('roam~0'), fuzzy(DEFAULT_FIELD, 'roam', 0));
    assert.deepEqual(parseLuceneQuery('abcdefghij~0.7'), fuzzy(DEFAULT_FIELD, 'abcdefghij', 2));
    assert.deepEqual(parseLuceneQuery('abcde~0.75'), fuzzy(DEFAULT_FIELD, 'abcde', 1));
  });

  test('a regular expression between slashes is one leaf; \\/ stands for a slash, other escapes stay', () => {
    assert.deepEqual(parseLuceneQuery('title:/ro[a-z]+/'), { type: 'regex', field: 'title', pattern: 'ro[a-z]+' });
    assert.deepEqual(parseLuceneQuery('/a\\/b\\d/ OR x'), {
      type: 'bool',
      clauses: [
        { occur: 'should', query: { type: 'regex', field: DEFAULT_FIELD, pattern: 'a/b\\d' } },
        { occur: 'should', query: term(DEFAULT_FIELD, 'x') },
      ],
    });
  });

  test('queries it cannot read are syntax errors', () => {
    for (const q of ['', '(a', 'a)', '"open', 'AND a', 'price:[1 TO', '"a b"~2', '/open', 'a* ~', '~2', 'a^', 'x:']) {
      assert.throws(() => parseLuceneQuery(q), LuceneSyntaxError, q);
    }
  });

  test('any input parses or fails with a syntax error, never another exception', () => {
    const alphabet = fc.constantFrom(...'ab: ()"[]{}*?+-!^~\\TOANDR&|1'.split(''));
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 20 }).map((chars) => chars.join('')), (q) => {
        try {
          parseLuceneQuery(q);
        } catch (error) {
          assert.ok(error instanceof LuceneSyntaxError, `${q}: ${String(error)}`);
        }
      }),
    );
  });

  test('a word of letters and digits is one term of the default field', () => {
    fc.assert(fc.property(fc.stringMatching(/^[a-z0-9]{1,12}$/), (word) => {
      fc.pre(!['AND', 'OR', 'NOT', 'TO'].includes(word));
      assert.deepEqual(parseLuceneQuery(word), term(DEFAULT_FIELD, word));
    }));
  });
});

describe('FTS5 MATCH text of a parsed query', () => {
  test('terms, phrases and prefixes are FTS5 strings, quotes doubled', () => {
    assert.equal(fts5Match(parseLuceneQuery('t:hello'), 't'), '"hello"');
    assert.equal(fts5Match(parseLuceneQuery('t:"big cat"'), 't'), '"big cat"');
    assert.equal(fts5Match(parseLuceneQuery('t:hel*'), 't'), '"hel" *');
    assert.equal(fts5Match(term('t', 'a"b'), 't'), '"a""b"');
  });

  test('boolean clauses become AND, OR and NOT', () => {
    assert.equal(fts5Match(parseLuceneQuery('t:a AND t:b'), 't'), '("a") AND ("b")');
    assert.equal(fts5Match(parseLuceneQuery('t:a t:b'), 't'), '("a") OR ("b")');
    assert.equal(fts5Match(parseLuceneQuery('t:a -t:b'), 't'), '(("a")) NOT (("b"))');
  });

  test('what FTS5 cannot say is null: other fields, ranges, inner wildcards, prohibitions alone', () => {
    for (const q of ['u:a', 't:a u:b', 't:[a TO b]', '*:*', 't:h*o', 't:*', '-t:a']) assert.equal(fts5Match(parseLuceneQuery(q), 't'), null, q);
  });
});
