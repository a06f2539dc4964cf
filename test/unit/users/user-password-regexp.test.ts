import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePasswordRegexp } from '../../../src/users/user-password-regexp.js';

/** The setting CouchDB's users_db_test.exs uses (its Elixir escapes resolved). */
const COUCHDB_SUITE = '[{".{10,}"}, {"[A-Z]+", "Requirement 2."}, {"[a-z]+", ""}, {"\\\\d+", "Req 4."}, "[!.,()]+"]';

const simplify = (setting: string) =>
  parsePasswordRegexp(setting)?.map(({ regex, reason }) => (reason === undefined ? [regex.source] : [regex.source, reason]));

describe('password_regexp parsing', () => {
  const parsed: [string, string, (string[])[]][] = [
    ['empty setting', '', []],
    ['empty list', '[]', []],
    ['empty list with spaces', '  [ ]  ', []],
    ['empty string, which Erlang reads as []', '""', []],
    ['list of strings', '[".{10,}", "[A-Z]+"]', [['.{10,}'], ['[A-Z]+']]],
    ['one-element tuple', '[{".{10,}"}]', [['.{10,}']]],
    ['tuple with a reason', '[{"[A-Z]+", "Requirement 2."}]', [['[A-Z]+', 'Requirement 2.']]],
    ['empty reason is no reason', '[{"[a-z]+", ""}]', [['[a-z]+']]],
    ['atom reason is no reason', '[{"[a-z]+", lowercase}]', [['[a-z]+']]],
    ['integer reason is no reason', '[{"[a-z]+", 42}]', [['[a-z]+']]],
    ['CouchDB suite setting', COUCHDB_SUITE, [['.{10,}'], ['[A-Z]+', 'Requirement 2.'], ['[a-z]+'], ['\\d+', 'Req 4.'], ['[!.,()]+']]],
    ['adjacent strings concatenate', '["ab" "c"]', [['abc']]],
    ['escaped quote and backslash', '["a\\"b\\\\."]', [['a"b\\.']]],
    ['hex, braced hex and octal escapes', '["\\x41\\x{42}\\103"]', [['ABC']]],
    ['an unknown escape is the character itself', '["\\."]', [['.']]],
    ['a character list is a string', '[[97, 98], [$c, $\\s]]', [['ab'], ['c ']]],
    ['an empty list item is the empty regex', '[[]]', [['(?:)']]],
    ['newlines between items', '[\n".",\n"x"\n]', [['.'], ['x']]],
  ];
  for (const [title, setting, expected] of parsed) {
    test(`parses: ${title}`, () => assert.deepEqual(simplify(setting), expected));
  }

  const unparsable: [string, string][] = [
    ['unbalanced (CouchDB suite)', '[{".{10,}"]'],
    ['not a list (CouchDB suite)', '{{".{10,}"}}'],
    ['a top-level string is a list of integers, not of regexes', '".{10,}"'],
    ['integer item', '[1]'],
    ['atom item', '[foo]'],
    ['three-element tuple', '[{"a", "b", "c"}]'],
    ['empty tuple', '[{}]'],
    ['regex that does not compile', '["("]'],
    ['PCRE-only syntax', '["(?i)abc"]'],
    ['trailing full stop', '[".*"].'],
    ['trailing comma', '[".*",]'],
    ['binary', '[<<"a">>]'],
    ['variable', '[X]'],
    ['unterminated string', '["abc]'],
    ['garbage after the term', '[".*"] x'],
    ['a bare word', 'yes'],
  ];
  for (const [title, setting] of unparsable) {
    test(`unparsable: ${title}`, () => assert.equal(parsePasswordRegexp(setting), undefined));
  }

  test('Erlang escapes: \\d is DEL, so a PCRE digit class needs \\\\d', () => {
    const [del] = parsePasswordRegexp('["\\d"]')!;
    assert.equal(del!.regex.source, '\x7f');
    assert.equal(del!.regex.test('5'), false);
    const [digit] = parsePasswordRegexp('["\\\\d"]')!;
    assert.equal(digit!.regex.test('5'), true);
  });

  test('regexes compile without flags (no unicode, no global state)', () => {
    for (const { regex } of parsePasswordRegexp(COUCHDB_SUITE)!) assert.equal(regex.flags, '');
  });

  test('the CouchDB suite passwords fail on the expected item', () => {
    const requirements = parsePasswordRegexp(COUCHDB_SUITE)!;
    const firstFailure = (password: string) => requirements.findIndex(({ regex }) => !regex.test(password));
    assert.equal(firstFailure('funnybone'), 0);
    assert.equal(firstFailure('funnnnnybone'), 1);
    assert.equal(firstFailure('FUNNNNNYBONE'), 2);
    assert.equal(firstFailure('funnnnnyBONE'), 3);
    assert.equal(firstFailure('funnnnnyB0N3'), 4);
    assert.equal(firstFailure('funnnnnyB0N3!'), -1);
  });
});
