/**
 * The Lucene query syntax Nouveau's `q` takes, parsed into a tree (docs/search.md): terms, phrases,
 * `field:` prefixes, `AND`/`OR`/`NOT` (and `&&`, `||`, `!`), `+`/`-`, grouping, wildcards `*` and
 * `?`, ranges `[a TO b]` and `{a TO b}` (`*` for an open end), fuzzy terms (`term~`, `term~1`,
 * Lucene's old `term~0.8` similarity as edits), regular expressions (`/re/`, matching whole terms),
 * `*:*`, and `^boost` (accepted, ignored). Clauses combine as Lucene's classic parser does with `OR` as the default operator
 * (`QueryParserBase.addClause`): `AND` makes both neighbours required, `NOT` prohibits the next.
 * Unqualified terms search the field `default`, as Nouveau's. A query it cannot read throws
 * `LuceneSyntaxError` (CouchDB answers 400 `bad_request`).
 */

export const DEFAULT_FIELD = 'default';

type Occur = 'must' | 'should' | 'must_not';

export type SearchQuery =
  | { readonly type: 'all' }
  | { readonly type: 'term'; readonly field: string; readonly text: string }
  | { readonly type: 'phrase'; readonly field: string; readonly text: string }
  | { readonly type: 'wildcard'; readonly field: string; readonly pattern: string }
  /** Terms within `edits` (0 to 2) insertions, deletions, substitutions or transpositions of `text`. */
  | { readonly type: 'fuzzy'; readonly field: string; readonly text: string; readonly edits: number }
  /** Terms the regular expression matches whole. */
  | { readonly type: 'regex'; readonly field: string; readonly pattern: string }
  /** Any of these terms: what a fuzzy or regex query expands to (term-expansion.ts), never parsed. */
  | { readonly type: 'terms'; readonly field: string; readonly terms: readonly string[] }
  | {
      readonly type: 'range';
      readonly field: string;
      readonly lower: string | null;
      readonly upper: string | null;
      readonly includeLower: boolean;
      readonly includeUpper: boolean;
    }
  | { readonly type: 'bool'; readonly clauses: readonly { readonly occur: Occur; readonly query: SearchQuery }[] };

export class LuceneSyntaxError extends Error {}

type Token =
  | { kind: 'open' | 'close' | 'plus' | 'minus' | 'and' | 'or' | 'not' | 'colon' | 'rangeOpen' | 'rangeClose' | 'to' | 'boost'; text: string }
  | { kind: 'word'; text: string; wild: boolean }
  | { kind: 'quoted'; text: string }
  /** `~` and its number, if any. */
  | { kind: 'fuzzy'; text: string; value: string }
  | { kind: 'regex'; text: string; pattern: string };

const SPECIAL = new Set(['(', ')', ':', '"', '[', ']', '{', '}', '^', '+', '-', '!', '~', '\\', '/', ' ', '\t', '\n', '\r']);

function readWord(input: string, start: number): { token: Token; end: number } {
  let text = '';
  let wild = false;
  let i = start;
  while (i < input.length) {
    const c = input[i]!;
    if (c === '\\') {
      if (i + 1 >= input.length) throw new LuceneSyntaxError('Cannot parse query: the query ends with an escape character');
      text += input[i + 1];
      i += 2;
    } else if (!SPECIAL.has(c) || (text !== '' && (c === '-' || c === '+') && i + 1 < input.length && !SPECIAL.has(input[i + 1]!))) {
      // A `-` or `+` inside a word belongs to it (`e-mail`), as in Lucene.
      if (c === '*' || c === '?') wild = true;
      text += c;
      i++;
    } else break;
  }
  if (i === start) throw new LuceneSyntaxError(`Cannot parse query: unexpected ${JSON.stringify(input[start])}`);
  return { token: { kind: 'word', text, wild }, end: i };
}

function readQuoted(input: string, start: number): { token: Token; end: number } {
  let text = '';
  let i = start + 1;
  while (i < input.length && input[i] !== '"') {
    if (input[i] === '\\' && i + 1 < input.length) i++;
    text += input[i++];
  }
  if (i >= input.length) throw new LuceneSyntaxError('Cannot parse query: a phrase is missing its closing quote');
  return { token: { kind: 'quoted', text }, end: i + 1 };
}

/** `/…/`: a `\/` inside stands for `/`; other escapes are the expression's own. */
function readRegex(input: string, start: number): { token: Token; end: number } {
  let pattern = '';
  let i = start + 1;
  while (i < input.length && input[i] !== '/') {
    if (input[i] === '\\' && input[i + 1] === '/') i++;
    else if (input[i] === '\\' && i + 1 < input.length) pattern += input[i++];
    pattern += input[i++];
  }
  if (i >= input.length) throw new LuceneSyntaxError('Cannot parse query: a regular expression is missing its closing /');
  return { token: { kind: 'regex', text: input.slice(start, i + 1), pattern }, end: i + 1 };
}

/** Lucene's edits of `term~value` (FuzzyQuery.floatToEdits): 2 by default, at most 2; a similarity below 1 counts by the term's length. */
function editsOf(value: string, term: string): number {
  if (value === '') return 2;
  const number = Number(value);
  if (number >= 1) return Math.min(Math.floor(number), 2);
  return number === 0 ? 0 : Math.min(Math.floor((1 - number) * [...term].length), 2);
}

const PUNCTUATION: Readonly<Record<string, Token['kind']>> = { '(': 'open', ')': 'close', '+': 'plus', '-': 'minus', '!': 'not', ':': 'colon', '[': 'rangeOpen', '{': 'rangeOpen', ']': 'rangeClose', '}': 'rangeClose' };

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (/\s/.test(c)) i++;
    else if (input.startsWith('&&', i) || input.startsWith('||', i)) (tokens.push({ kind: c === '&' ? 'and' : 'or', text: input.slice(i, i + 2) }), (i += 2));
    else if (c === '"') {
      const { token, end } = readQuoted(input, i);
      tokens.push(token);
      i = end;
    } else if (c === '^') {
      const match = /^\^\d+(\.\d+)?/.exec(input.slice(i));
      if (match === null) throw new LuceneSyntaxError(`Cannot parse query: a boost needs a number at position ${i}`);
      tokens.push({ kind: 'boost', text: match[0] });
      i += match[0].length;
    } else if (PUNCTUATION[c] !== undefined) (tokens.push({ kind: PUNCTUATION[c]!, text: c } as Token), i++);
    else if (c === '~') {
      const match = /^~(\d+(\.\d+)?|\.\d+)?/.exec(input.slice(i))!;
      tokens.push({ kind: 'fuzzy', text: match[0], value: match[1] ?? '' });
      i += match[0].length;
    } else if (c === '/') {
      const { token, end } = readRegex(input, i);
      tokens.push(token);
      i = end;
    }
    else {
      const { token, end } = readWord(input, i);
      tokens.push(Object.hasOwn(KEYWORDS, token.text) && token.kind === 'word' && !token.wild ? { kind: KEYWORDS[token.text]!, text: token.text } : token);
      i = end;
    }
  }
  return tokens;
}

const KEYWORDS: Readonly<Record<string, 'and' | 'or' | 'not' | 'to'>> = { AND: 'and', OR: 'or', NOT: 'not', TO: 'to' };

class Parser {
  #at = 0;
  constructor(readonly tokens: Token[]) {}

  peek(): Token | undefined {
    return this.tokens[this.#at];
  }
  next(): Token {
    const token = this.tokens[this.#at++];
    if (token === undefined) throw new LuceneSyntaxError('Cannot parse query: it ends too early');
    return token;
  }
  expect(kind: Token['kind']): Token {
    const token = this.next();
    if (token.kind !== kind) throw new LuceneSyntaxError(`Cannot parse query: expected ${kind} but found ${JSON.stringify(token.text)}`);
    return token;
  }

  /** Clauses up to a closing parenthesis or the end, combined as Lucene's `addClause`. */
  clauses(field: string): SearchQuery {
    const clauses: { occur: Occur; query: SearchQuery }[] = [];
    let first = true;
    for (let token = this.peek(); token !== undefined && token.kind !== 'close'; token = this.peek()) {
      let conjunction: 'and' | 'or' | undefined;
      if (token.kind === 'and' || token.kind === 'or') {
        if (first) throw new LuceneSyntaxError(`Cannot parse query: ${JSON.stringify(token.text)} has nothing before it`);
        conjunction = token.kind;
        this.next();
      }
      let modifier: Occur | undefined;
      const mod = this.peek();
      if (mod?.kind === 'plus') (modifier = 'must', this.next());
      else if (mod?.kind === 'minus' || mod?.kind === 'not') (modifier = 'must_not', this.next());
      const query = this.clause(field);
      if (conjunction === 'and' && clauses.length > 0 && clauses[clauses.length - 1]!.occur !== 'must_not') clauses[clauses.length - 1]!.occur = 'must';
      const occur: Occur = modifier ?? (conjunction === 'and' ? 'must' : 'should');
      clauses.push({ occur, query });
      first = false;
    }
    if (clauses.length === 0) throw new LuceneSyntaxError('Cannot parse query: it is empty');
    if (clauses.length === 1 && clauses[0]!.occur !== 'must_not') return clauses[0]!.query;
    return { type: 'bool', clauses };
  }

  clause(field: string): SearchQuery {
    const token = this.next();
    if (token.kind === 'word' && this.peek()?.kind === 'colon') {
      this.next();
      return this.boosted(this.clause(token.text));
    }
    if (token.kind === 'open') {
      const inner = this.clauses(field);
      this.expect('close');
      return this.boosted(inner);
    }
    if (token.kind === 'rangeOpen') return this.boosted(this.range(field, token.text === '['));
    if (token.kind === 'quoted') {
      if (this.peek()?.kind === 'fuzzy') throw new LuceneSyntaxError('Cannot parse query: proximity queries ("…"~n) are not supported');
      return this.boosted({ type: 'phrase', field, text: token.text });
    }
    if (token.kind === 'regex') {
      if (field === '*') throw new LuceneSyntaxError('Cannot parse query: the field * only takes *');
      return this.boosted({ type: 'regex', field, pattern: token.pattern });
    }
    if (token.kind === 'word') {
      if (token.text === '*' && field === '*') return this.boosted({ type: 'all' });
      if (field === '*') throw new LuceneSyntaxError('Cannot parse query: the field * only takes *');
      const fuzzy = this.peek();
      if (fuzzy?.kind === 'fuzzy' && !token.wild) {
        this.next();
        return this.boosted({ type: 'fuzzy', field, text: token.text, edits: editsOf(fuzzy.value, token.text) });
      }
      return this.boosted(token.wild ? { type: 'wildcard', field, pattern: token.text } : { type: 'term', field, text: token.text });
    }
    throw new LuceneSyntaxError(`Cannot parse query: unexpected ${JSON.stringify(token.text)}`);
  }

  range(field: string, includeLower: boolean): SearchQuery {
    const endOf = (token: Token): string | null => {
      if (token.kind !== 'word' && token.kind !== 'quoted') throw new LuceneSyntaxError(`Cannot parse query: a range bound cannot be ${JSON.stringify(token.text)}`);
      return token.kind === 'word' && token.text === '*' ? null : token.text;
    };
    const lower = endOf(this.next());
    this.expect('to');
    const upper = endOf(this.next());
    const close = this.expect('rangeClose');
    return { type: 'range', field, lower, upper, includeLower, includeUpper: close.text === ']' };
  }

  boosted(query: SearchQuery): SearchQuery {
    if (this.peek()?.kind === 'boost') this.next();
    return query;
  }
}

/** The tree of a Lucene query string; throws `LuceneSyntaxError` when it cannot be read. */
export function parseLuceneQuery(input: string): SearchQuery {
  const parser = new Parser(tokenize(input));
  const query = parser.clauses(DEFAULT_FIELD);
  const rest = parser.peek();
  if (rest !== undefined) throw new LuceneSyntaxError(`Cannot parse query: unexpected ${JSON.stringify(rest.text)}`);
  return query;
}
