/**
 * A parsed Lucene query (lucene-query.ts) as an SQLite FTS5 MATCH expression, for a query whose
 * every leaf searches one text field: terms and phrases become FTS5 strings, a trailing `*` a
 * prefix query, the terms a fuzzy or regex query expanded to `OR`, `must` clauses `AND`, `should` clauses `OR` and `must_not` clauses `NOT`. Anything
 * FTS5 cannot say (ranges, `*:*`, a wildcard other than a trailing `*`, a query of prohibited
 * clauses alone) answers null: the caller evaluates it another way.
 */
import type { SearchQuery } from './lucene-query.js';

/** An FTS5 string: double quotes doubled, so any text is one string (never an operator). */
const quoted = (text: string): string => `"${text.replaceAll('"', '""')}"`;

function leaf(query: SearchQuery): string | null {
  switch (query.type) {
    case 'term':
    case 'phrase':
      return quoted(query.text);
    case 'terms':
      return query.terms.length === 0 ? null : query.terms.map(quoted).join(' OR ');
    case 'wildcard': {
      const stem = query.pattern.slice(0, -1);
      if (!query.pattern.endsWith('*') || stem === '' || /[*?]/.test(stem)) return null;
      return `${quoted(stem)} *`;
    }
    default:
      return null;
  }
}

/** The FTS5 MATCH text of `query` when every leaf searches `field` and FTS5 can say it; else null. */
export function fts5Match(query: SearchQuery, field: string): string | null {
  if (query.type !== 'bool') return 'field' in query && query.field === field ? leaf(query) : null;
  const parts: Record<'must' | 'should' | 'must_not', string[]> = { must: [], should: [], must_not: [] };
  for (const clause of query.clauses) {
    const text = fts5Match(clause.query, field);
    if (text === null) return null;
    parts[clause.occur].push(`(${text})`);
  }
  // As Lucene: with a required clause, optional ones only score, so they do not narrow the match.
  const positive = parts.must.length > 0 ? parts.must.join(' AND ') : parts.should.join(' OR ');
  if (positive === '') return null;
  return parts.must_not.length === 0 ? positive : `(${positive}) NOT (${parts.must_not.join(' OR ')})`;
}
