/**
 * Fuzzy (`term~2`) and regular-expression (`/re/`) queries, as Lucene rewrites them: into the terms
 * of the field's vocabulary they match, searched as any of them (`terms` leaves). The vocabulary is
 * what the index holds (`SearchStore.vocabulary`): analysed terms of a text field, whole values of
 * a string field. Expansion is bounded as Lucene's is: a fuzzy query keeps the
 * `MAX_FUZZY_EXPANSIONS` closest terms (FuzzyQuery's default `maxExpansions`), a regular expression
 * matching more than `MAX_REGEX_TERMS` terms is refused (Lucene's default `maxClauseCount`).
 * Regular expressions are RE2's (`re2js`), anchored to the whole term as Lucene's are.
 */
import { RE2JS, RE2JSException } from 're2js';
import { badRequest } from '../errors/catalog.js';
import type { SearchFieldType } from '../storage/storage.js';
import type { SearchQuery } from './lucene-query.js';

const MAX_FUZZY_EXPANSIONS = 50;
const MAX_REGEX_TERMS = 1024;
/** Longest regular expression accepted, in UTF-16 units. */
const MAX_PATTERN_LENGTH = 1000;

interface ExpansionContext {
  types: ReadonlyMap<string, SearchFieldType>;
  /** Every term of a text field, or every value of a string field, the index holds. */
  vocabulary(field: string, type: 'text' | 'string'): Promise<string[]>;
}

/**
 * The optimal string alignment distance of `a` and `b` by code point (insertions, deletions,
 * substitutions, adjacent transpositions), or `limit + 1` once it must exceed `limit`.
 */
function editDistance(a: readonly string[], b: readonly string[], limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > limit) return limit + 1;
    [before, previous] = [previous, current];
  }
  return previous[b.length]!;
}

function fuzzyTerms(vocabulary: readonly string[], text: string, edits: number): string[] {
  const wanted = [...text];
  const close: { term: string; distance: number }[] = [];
  for (const term of vocabulary) {
    const distance = editDistance(wanted, [...term], edits);
    if (distance <= edits) close.push({ term, distance });
  }
  close.sort((x, y) => x.distance - y.distance || (x.term < y.term ? -1 : x.term > y.term ? 1 : 0));
  return close.slice(0, MAX_FUZZY_EXPANSIONS).map((entry) => entry.term);
}

function regexTerms(vocabulary: readonly string[], pattern: string): string[] {
  if (pattern.length > MAX_PATTERN_LENGTH) throw badRequest(`regular expressions in queries are limited to ${MAX_PATTERN_LENGTH} characters`);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    if (error instanceof RE2JSException) throw badRequest(`Cannot parse query: /${pattern}/: ${error.message}`);
    throw error;
  }
  const terms = vocabulary.filter((term) => compiled.matcher(term).matches());
  if (terms.length > MAX_REGEX_TERMS) throw badRequest(`/${pattern}/ matches more than ${MAX_REGEX_TERMS} terms of the index`);
  return terms;
}

/** `query` with its fuzzy and regex leaves replaced by the terms they match (none on a double field or an unknown one). */
export async function expandTerms(query: SearchQuery, context: ExpansionContext): Promise<SearchQuery> {
  if (query.type === 'bool') {
    const clauses = await Promise.all(query.clauses.map(async (clause) => ({ occur: clause.occur, query: await expandTerms(clause.query, context) })));
    return { type: 'bool', clauses };
  }
  if (query.type !== 'fuzzy' && query.type !== 'regex') return query;
  const type = context.types.get(query.field);
  if (type !== 'text' && type !== 'string') return { type: 'terms', field: query.field, terms: [] };
  if (query.type === 'regex') return { type: 'terms', field: query.field, terms: regexTerms(await context.vocabulary(query.field, type), query.pattern) };
  // Lucene normalises the term of a fuzzy query as the analyzer does (lower case); a string field's values are whole.
  const text = type === 'text' ? query.text.toLowerCase() : query.text;
  if (query.edits === 0) return { type: 'terms', field: query.field, terms: [text] };
  return { type: 'terms', field: query.field, terms: fuzzyTerms(await context.vocabulary(query.field, type), text, query.edits) };
}
