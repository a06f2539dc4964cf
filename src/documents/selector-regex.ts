/**
 * `$regex` of Mango selectors, matched by RE2 (the `re2js` port) instead of a backtracking engine:
 * matching time grows linearly with the value, so `^(a+)+$` cannot freeze the server as it did with
 * `RegExp` (CouchDB's Erlang `re` is backtracking too, and stops at a match limit instead).
 *
 * RE2 refuses what needs backtracking: backreferences (`\1`), lookahead and lookbehind (`(?=`,
 * `(?!`, `(?<=`, `(?<!`), possessive quantifiers and atomic groups; those patterns are a 400. The
 * rest of the syntax is PCRE's (`(?i)`, `\d`, `[[:alpha:]]`, `\p{Greek}`, `\A`, `\z`); values are
 * matched by code point.
 *
 * Work is bounded three ways, so that no selector can hold the event loop: the pattern's length and
 * its RE2 program size (estimated before compiling, since compiling a huge program is itself slow),
 * and each match's worst case (value length × program size, RE2's NFA bound).
 *
 * @example
 * const regex = compileRegex('(?i)^note-')
 * regex.test('NOTE-1') // true
 */
import { RE2JS, RE2JSException } from 're2js';
import { badRequest } from '../errors/catalog.js';
import type { CouchError } from '../errors/couch-error.js';

/** Longest `$regex` source accepted, in UTF-16 units. */
const MAX_PATTERN_LENGTH = 2000;
/** Largest RE2 program (instructions) one `$regex` may compile to; `.{0,400}` is about 800. */
export const MAX_PROGRAM_SIZE = 1000;
/**
 * Largest worst-case work of one match, value length × program size (about 15 ns each when RE2
 * falls back to its NFA): a single match then holds the event loop under 100 ms.
 */
export const MAX_MATCH_COST = 5_000_000;

export interface SelectorRegex {
  readonly pattern: string;
  readonly programSize: number;
  /** Whether the pattern matches anywhere in `value` (unanchored, as CouchDB's `re:run`). */
  test(value: string): boolean;
}

const badRegex = (pattern: string, why: string): CouchError => badRequest(`Bad argument for operator $regex: ${JSON.stringify(pattern)}: ${why}`);

/** RE2's syntax errors that name a PCRE feature Divan does not offer, rather than a typo. */
const UNSUPPORTED = /invalid or unsupported Perl syntax|invalid escape sequence: `\\[1-9]|invalid named capture: `\(\?<[=!]|invalid nested repetition operator: `[*+?]\+/;

/** Compiles a `$regex` pattern; every refusal is a 400 naming the pattern and the reason. */
export function compileRegex(pattern: string): SelectorRegex {
  if (pattern.length > MAX_PATTERN_LENGTH) throw badRegex(pattern.slice(0, 40) + '…', `patterns are limited to ${MAX_PATTERN_LENGTH} characters`);
  if (estimatedProgramSize(pattern) > MAX_PROGRAM_SIZE) throw tooLarge(pattern);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    const message = error.message.replace(/^error parsing regexp: /, '');
    if (UNSUPPORTED.test(error.message)) {
      throw badRegex(pattern, `${message} (Divan matches with RE2: backreferences, lookaround, possessive quantifiers and atomic groups are not supported)`);
    }
    throw badRegex(pattern, message);
  }
  const programSize = compiled.programSize();
  if (programSize > MAX_PROGRAM_SIZE) throw tooLarge(pattern);
  return {
    pattern,
    programSize,
    test(value: string): boolean {
      if (value.length * programSize > MAX_MATCH_COST) {
        throw badRegex(pattern, `a value of ${value.length} characters is too long to match against this pattern (limit: ${Math.floor(MAX_MATCH_COST / programSize)})`);
      }
      return compiled.test(value);
    },
  };
}

function tooLarge(pattern: string): CouchError {
  return badRegex(pattern, `the pattern is too large (more than ${MAX_PROGRAM_SIZE} RE2 instructions; counted repetitions such as {1000} multiply)`);
}

const PROGRAM_OVERHEAD = 4;
const COUNTED_REPETITION = /\{(\d+)(?:,(\d*))?\}/y;

/**
 * An upper estimate of the RE2 program a pattern compiles to, read from its source in one pass:
 * one instruction per literal or class, two per group and per `*`/`+`/`?`, and `x{m,n}` costs
 * `n` copies of `x` and `n - m` more. It only has to be cheap and rarely too low: the compiled size is checked again.
 */
export function estimatedProgramSize(pattern: string): number {
  // One frame per open group.
  const frames: Frame[] = [{ size: 0, last: 0 }];
  let top = frames[0]!;
  const atom = (size: number): void => {
    top.size += size;
    top.last = size;
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      const escape = escapeAt(pattern, i);
      atom(escape.size);
      i = escape.end;
    } else if (c === '[') {
      i = classEnd(pattern, i);
      atom(1);
    } else if (c === '(') {
      top = { size: 0, last: 0 };
      frames.push(top);
      i++;
    } else if (c === ')' && frames.length > 1) {
      const group = frames.pop()!;
      top = frames[frames.length - 1]!;
      atom(group.size + 2);
      i++;
    } else if (c === '|') {
      top.size += 1;
      top.last = 0;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      top.size += 2;
      top.last += 2;
      i++;
    } else if (c === '{') {
      COUNTED_REPETITION.lastIndex = i;
      const repetition = COUNTED_REPETITION.exec(pattern);
      if (repetition === null) {
        atom(1);
        i++;
      } else {
        repeatLast(top, repetition);
        i += repetition[0].length;
      }
    } else {
      atom(1);
      i++;
    }
  }
  // RE2 adds a few instructions of its own (the whole match's capture, fail, match).
  return PROGRAM_OVERHEAD + frames.reduce((total, frame) => total + frame.size, 0);
}

/** A group being estimated: its size so far and the size of its last atom (what a quantifier repeats). */
interface Frame {
  size: number;
  last: number;
}

/** The escape at `start`: the index after it and its cost (`\Q…\E` quotes a literal run, `\p{…}` names a class). */
function escapeAt(pattern: string, start: number): { end: number; size: number } {
  const next = pattern[start + 1];
  if (next === 'Q') {
    const close = pattern.indexOf('\\E', start + 2);
    const stop = close === -1 ? pattern.length : close;
    return { end: close === -1 ? pattern.length : close + 2, size: Math.max(1, stop - (start + 2)) };
  }
  const braced = (next === 'p' || next === 'P' || next === 'x') && pattern[start + 2] === '{' ? pattern.indexOf('}', start + 3) : -1;
  return { end: braced === -1 ? start + 2 : braced + 1, size: 1 };
}

/** Applies a counted repetition (`{m}`, `{m,}`, `{m,n}`) to the frame's last atom. */
function repeatLast(top: Frame, repetition: RegExpExecArray): void {
  // RE2 writes x{m} as m copies of x, x{m,} as m copies and a loop, x{m,n} as n copies.
  const min = Number(repetition[1]);
  const open = repetition[2] === '';
  const max = repetition[2] === undefined || open ? min : Number(repetition[2]);
  const copies = Math.max(min, max, 1);
  const extra = open ? 2 : Math.max(0, max - min);
  top.size += top.last * (copies - 1) + extra;
  top.last = top.last * copies + extra;
}

/** The index after the character class opening at `start` (`[]a]`, `[^]a]`, `[[:alpha:]]`, escapes). */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  while (i < pattern.length && pattern[i] !== ']') {
    if (pattern[i] === '\\') i += 2;
    else if (pattern.startsWith('[:', i)) {
      const end = pattern.indexOf(':]', i + 2);
      i = end === -1 ? i + 1 : end + 2;
    } else i++;
  }
  return i + 1;
}
