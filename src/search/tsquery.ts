/**
 * A parsed Lucene query (lucene-query.ts) as the text PostgreSQL's `to_tsquery(config, text)`
 * reads, for a query whose every leaf searches one text field: a term is a quoted lexeme, a phrase
 * its words joined by `<->`, a trailing `*` a `:*` prefix, expanded terms (fuzzy, regex) `|`, `must` clauses `&`, `should` clauses
 * `|`, `must_not` clauses `& !`. `to_tsquery` runs each lexeme through the field's text search
 * configuration, so stemming and stop words match the indexed side. Anything it cannot say
 * (ranges, `*:*`, a wildcard other than a trailing `*`, prohibitions alone) answers null.
 */
import type { SearchQuery } from './lucene-query.js';

/** A tsquery lexeme: quotes and backslashes escaped, so any text is one lexeme (never an operator). */
const lexeme = (text: string): string => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

function leaf(query: SearchQuery): string | null {
  switch (query.type) {
    case 'term':
      return lexeme(query.text);
    case 'phrase': {
      const words = query.text.split(/\s+/).filter((word) => word !== '');
      return words.length === 0 ? null : words.map(lexeme).join(' <-> ');
    }
    case 'terms':
      return query.terms.length === 0 ? null : query.terms.map(lexeme).join(' | ');
    case 'wildcard': {
      const stem = query.pattern.slice(0, -1);
      if (!query.pattern.endsWith('*') || stem === '' || /[*?]/.test(stem)) return null;
      return `${lexeme(stem)}:*`;
    }
    default:
      return null;
  }
}

/** The `to_tsquery` text of `query` when every leaf searches `field` and a tsquery can say it; else null. */
export function tsqueryText(query: SearchQuery, field: string): string | null {
  if (query.type !== 'bool') return 'field' in query && query.field === field ? leaf(query) : null;
  const parts: Record<'must' | 'should' | 'must_not', string[]> = { must: [], should: [], must_not: [] };
  for (const clause of query.clauses) {
    const text = tsqueryText(clause.query, field);
    if (text === null) return null;
    parts[clause.occur].push(`(${text})`);
  }
  // As Lucene: with a required clause, optional ones only score, so they do not narrow the match.
  const positive = parts.must.length > 0 ? parts.must.join(' & ') : parts.should.join(' | ');
  if (positive === '') return null;
  return parts.must_not.length === 0 ? positive : `(${positive}) & !(${parts.must_not.join(' | ')})`;
}
