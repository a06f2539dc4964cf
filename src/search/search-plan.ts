/**
 * A parsed Lucene query (lucene-query.ts) as a `SearchPlan` storage evaluates: each leaf by the
 * type its field was indexed with. Text fields become full-text leaves in the backend's syntax
 * (fts5-match.ts, tsquery.ts), a whole sub-query at once when it searches one text field; string
 * fields match exactly (wildcards and ranges too); double fields match numbers and numeric ranges.
 * Fuzzy and regex leaves arrive expanded into the terms they match (term-expansion.ts).
 * A field nothing was indexed under matches nothing, as in Lucene. Clauses combine as Lucene's
 * boolean query: required ones all match, optional ones only when none is required, prohibited
 * ones exclude.
 */
import { badRequest } from '../errors/catalog.js';
import type { SearchFieldType, SearchPlan } from '../storage/storage.js';
import { fts5Match } from './fts5-match.js';
import type { SearchQuery } from './lucene-query.js';
import { tsqueryText } from './tsquery.js';

interface PlanContext {
  types: ReadonlyMap<string, SearchFieldType>;
  analyzerOf(field: string): string;
  syntax: 'fts5' | 'tsquery';
}

type Leaf = Exclude<SearchQuery, { type: 'all' | 'bool' }>;

const NONE: SearchPlan = { kind: 'none' };

function textMatch(query: SearchQuery, field: string, context: PlanContext): string | null {
  return context.syntax === 'fts5' ? fts5Match(query, field) : tsqueryText(query, field);
}

/** The one field every leaf of `query` searches, if there is one. */
function soleField(query: SearchQuery): string | undefined {
  if (query.type === 'all') return undefined;
  if (query.type !== 'bool') return query.field;
  const fields = new Set(query.clauses.map((clause) => soleField(clause.query)));
  return fields.size === 1 ? [...fields][0] : undefined;
}

function number(text: string | null): number | undefined {
  if (text === null) return undefined;
  const value = Number(text);
  if (text.trim() === '' || Number.isNaN(value)) throw badRequest(`${JSON.stringify(text)} is not a number`);
  return value;
}

function doubleLeaf(query: Leaf): SearchPlan {
  if (query.type === 'wildcard' || query.type === 'terms' || query.type === 'fuzzy' || query.type === 'regex') return NONE;
  if (query.type === 'range') return { kind: 'double', field: query.field, range: { lower: number(query.lower), upper: number(query.upper), includeLower: query.includeLower, includeUpper: query.includeUpper } };
  const value = number(query.text);
  return { kind: 'double', field: query.field, range: { lower: value, upper: value, includeLower: true, includeUpper: true } };
}

function stringLeaf(query: Leaf): SearchPlan {
  if (query.type === 'fuzzy' || query.type === 'regex') return NONE;
  if (query.type === 'terms') {
    const parts: SearchPlan[] = query.terms.map((equals) => ({ kind: 'string', field: query.field, equals }));
    return parts.length === 0 ? NONE : parts.length === 1 ? parts[0]! : { kind: 'or', parts };
  }
  if (query.type === 'wildcard') return { kind: 'string', field: query.field, pattern: query.pattern };
  if (query.type === 'range') {
    const range = { lower: query.lower ?? undefined, upper: query.upper ?? undefined, includeLower: query.includeLower, includeUpper: query.includeUpper };
    return { kind: 'string', field: query.field, range };
  }
  return { kind: 'string', field: query.field, equals: query.text };
}

function leafPlan(query: Leaf, context: PlanContext): SearchPlan {
  const type = context.types.get(query.field);
  if (type === 'double') return doubleLeaf(query);
  if (type === 'string') return stringLeaf(query);
  if (type !== 'text' || query.type === 'fuzzy' || query.type === 'regex' || (query.type === 'terms' && query.terms.length === 0)) return NONE;
  const match = textMatch(query, query.field, context);
  if (match !== null) return { kind: 'text', field: query.field, analyzer: context.analyzerOf(query.field), match };
  if (query.type === 'range') throw badRequest(`ranges search string and double fields; ${JSON.stringify(query.field)} is a text field`);
  throw badRequest(`a wildcard on the text field ${JSON.stringify(query.field)} can only end with *`);
}

/** The storage plan of `query`. */
export function planOf(query: SearchQuery, context: PlanContext): SearchPlan {
  if (query.type === 'all') return { kind: 'all' };
  if (query.type !== 'bool') return leafPlan(query, context);
  const field = soleField(query);
  if (field !== undefined && context.types.get(field) === 'text') {
    const match = textMatch(query, field, context);
    if (match !== null) return { kind: 'text', field, analyzer: context.analyzerOf(field), match };
  }
  const plans = (occur: string): SearchPlan[] => query.clauses.filter((clause) => clause.occur === occur).map((clause) => planOf(clause.query, context));
  const must = plans('must');
  const should = plans('should');
  const mustNot = plans('must_not');
  const combine = (kind: 'and' | 'or', parts: SearchPlan[]): SearchPlan => (parts.length === 1 ? parts[0]! : { kind, parts });
  const positive = must.length > 0 ? combine('and', must) : should.length > 0 ? combine('or', should) : { kind: 'all' as const };
  return mustNot.length === 0 ? positive : { kind: 'not', positive, negative: combine('or', mustNot) };
}
