import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type IniSections, isRepresentable, isRepresentableSection, parseIni, setIniValue } from '../../../src/config/ini.js';

function plain(sections: IniSections): Record<string, Record<string, string>> {
  return Object.fromEntries([...sections].map(([name, keys]) => [name, Object.fromEntries(keys)]));
}

// [rule, ini text, expected sections]. Cases marked "config.erl" are copied from its eunit tests.
const parseCases: Array<[string, string, Record<string, Record<string, string>>]> = [
  ['empty text', '', {}],
  ['key and value', '[s]\nk = v', { s: { k: 'v' } }],
  ['no spaces around = (config.erl)', '[s]\nk=v', { s: { k: 'v' } }],
  ['space after = only (config.erl)', '[s]\nk= v', { s: { k: 'v' } }],
  ['spaces before = only (config.erl)', '[s]\nk  =v', { s: { k: 'v' } }],
  ['key and value trimmed (config.erl)', '[s]\n  k=  v  ', { s: { k: 'v' } }],
  ['several keys and sections', '[a]\nx = 1\ny = 2\n\n[b]\nx = 3\n', { a: { x: '1', y: '2' }, b: { x: '3' } }],
  ['full-line comment', '[s]\n; k = v\nj = w', { s: { j: 'w' } }],
  ['indented full-line comment', '[s]\n   ;k = v\n\t;;k2 = v\nj = w', { s: { j: 'w' } }],
  ['commented-out header', '[s]\na = 1\n;[t]\nk = v', { s: { a: '1', k: 'v' } }],
  ['inline comment after a space', '[s]\nk = v ; note', { s: { k: 'v' } }],
  ['inline comment after a tab', '[s]\nk = v\t;note', { s: { k: 'v' } }],
  ['semicolon without whitespace is data', '[s]\nk = v1;v2', { s: { k: 'v1;v2' } }],
  ['value starting with ; (config.erl)', '[s]\nk =;v', { s: { k: ';v' } }],
  ['first whitespace-semicolon ends the line (config.erl)', '[s]\nk = v1;v2 ;c1; c2', { s: { k: 'v1;v2' } }],
  ['comment cuts the = away (config.erl)', '[s]\nk ;=v', {}],
  ['# is not a comment in the value', '[s]\nk = v # not a comment', { s: { k: 'v # not a comment' } }],
  ['# is not a comment at the start', '[s]\n#k = v', { s: { '#k': 'v' } }],
  ['= in the key, split on " = "', '[s]\nrsa:abc= = value', { s: { 'rsa:abc=': 'value' } }],
  ['" = " wins over an earlier bare =', '[s]\na=b = c', { s: { 'a=b': 'c' } }],
  ['only the first " = " splits', '[s]\nk = a = b', { s: { k: 'a = b' } }],
  ['bare = splits on the first = (config.erl)', '[s]\nk==v', { s: { k: '=v' } }],
  ['value starting with = (config.erl)', '[s]\nk = =v', { s: { k: '=v' } }],
  ['key starting with = when " = " splits (config.erl)', '[s]\n=k= = v', { s: { '=k=': 'v' } }],
  ['line starting with = ignored', '[s]\n= v\n==\n= =\nj = w', { s: { j: 'w' } }],
  ['line without = ignored', '[s]\ngarbage\nj = w', { s: { j: 'w' } }],
  ['empty value ignored', '[s]\nk =\nk2=\nk3 = ;c\nj = w', { s: { j: 'w' } }],
  ['empty value does not unset an earlier line', '[s]\nk = 1\nk =', { s: { k: '1' } }],
  ['lines before any section ignored', 'k = v\n; c\n[s]\nj = w', { s: { j: 'w' } }],
  ['header with an inline comment', '[s] ; about s\nk = v', { s: { k: 'v' } }],
  ['text after ] invalidates the header; keys stay in the open section', '[s]\nk = 1\n[t]x\nj = 2', { s: { k: '1', j: '2' } }],
  ['invalid header before any section', '[t] x\nk = v', {}],
  ['empty header invalid (config.erl)', '[]\nk = v', {}],
  ['unclosed header invalid', '[s]\n[t\nk = v', { s: { k: 'v' } }],
  ['second ] invalidates the header', '[s]\n[t]]\nk = v', { s: { k: 'v' } }],
  ['; glued to ] invalidates the header', '[s]\n[t];c\nk = v', { s: { k: 'v' } }],
  ['header name is not trimmed (config.erl "[s ]")', '[ s ]\nk = v', { ' s ': { k: 'v' } }],
  ['[ inside a header name', '[a[b]\nk = v', { 'a[b': { k: 'v' } }],
  ['dots are ordinary in section names', '[replicator.shares]\nk = v', { 'replicator.shares': { k: 'v' } }],
  ['CRLF line ends', '[s]\r\nk = v\r\nj = w\r\n', { s: { k: 'v', j: 'w' } }],
  ['CR line ends', '[s]\rk = v\rj = w', { s: { k: 'v', j: 'w' } }],
  ['Ctrl-Z splits lines', '[s]\x1ak = v\x1a', { s: { k: 'v' } }],
  ['later duplicate wins', '[s]\nk = 1\nk = 2', { s: { k: '2' } }],
  ['later duplicate in a reopened section wins', '[s]\nk = 1\n[t]\nx = y\n[s]\nk = 2', { s: { k: '2' }, t: { x: 'y' } }],
  ['values stay raw strings', '[s]\nb = true\nn = 5\nt = {chttpd_auth, h}', { s: { b: 'true', n: '5', t: '{chttpd_auth, h}' } }],
  ['NBSP is not whitespace for Erlang', '[s]\nk = v\u00a0', { s: { k: 'v\u00a0' } }],
  ['U+2028 is whitespace for Erlang', '[s]\nk = v\u2028', { s: { k: 'v' } }],
];

describe('parseIni', () => {
  for (const [rule, text, expected] of parseCases) {
    it(rule, () => {
      assert.deepEqual(plain(parseIni(text)), expected);
    });
  }

  it('returns strings, never booleans or numbers', () => {
    const keys = parseIni('[s]\nb = true\nn = 5').get('s');
    assert.equal(typeof keys?.get('b'), 'string');
    assert.equal(typeof keys?.get('n'), 'string');
  });
});

const representable: Array<[string, string]> = [
  ['k', 'v'],
  ['rsa:abc=', 'value'],
  ['=k=', 'v'],
  ['k', 'a = b'],
  ['k', 'v1;v2'],
  ['k', '# v'],
  ['k]', '[v]'],
  ['k', 'true'],
  ['k', '{chttpd_auth, cookie_authentication_handler}'],
  ['k', 'v\u00a0'],
];

const unrepresentable: Array<[string, string, string]> = [
  ['empty value (the deletion marker)', 'k', ''],
  ['empty key', '', 'v'],
  ['leading space in key', ' k', 'v'],
  ['trailing space in key', 'k ', 'v'],
  ['leading space in value', 'k', ' v'],
  ['trailing tab in value', 'k', 'v\t'],
  ['trailing U+2028 in value', 'k', 'v\u2028'],
  ['LF in value', 'k', 'a\nb'],
  ['CR in value', 'k', 'a\rb'],
  ['Ctrl-Z in value', 'k', 'a\x1ab'],
  ['LF in key', 'k\n', 'v'],
  ['value starting with ; (reads as " ;" comment)', 'k', ';v'],
  ['" ;" in value', 'k', 'v ;c'],
  ['tab-semicolon in value', 'k', 'v\t;c'],
  ['" ;" in key', 'k ;x', 'v'],
  ['" = " in key', 'a = b', 'v'],
  ['key ending in " ="', 'a =', 'v'],
  ['key starting with ;', ';k', 'v'],
  ['key starting with [', '[k', 'v'],
];

describe('isRepresentable', () => {
  for (const [key, value] of representable) {
    it(`accepts ${JSON.stringify(key)} = ${JSON.stringify(value)}`, () => {
      assert.equal(isRepresentable(key, value), true);
    });
  }
  for (const [rule, key, value] of unrepresentable) {
    it(`rejects ${rule}`, () => {
      assert.equal(isRepresentable(key, value), false);
    });
  }
});

describe('isRepresentableSection', () => {
  for (const name of ['s', 'replicator.shares', ' s', 'a[b', 'a=b', 'a;b']) {
    it(`accepts ${JSON.stringify(name)}`, () => assert.equal(isRepresentableSection(name), true));
  }
  for (const name of ['', 'a]b', 's]', 'a\nb', 'a ;b', 'a\t;b', 'a\x1ab']) {
    it(`rejects ${JSON.stringify(name)}`, () => assert.equal(isRepresentableSection(name), false));
  }
});

// [what, text before, section, key, value (undefined deletes), text after]
const editCases: Array<[string, string, string, string, string | undefined, string]> = [
  [
    'replaces the line in place, keeping comments around it',
    '; top\n[s]\n; about k\nk = old ; note\nj = 1\n',
    's', 'k', 'new',
    '; top\n[s]\n; about k\nk = new\nj = 1\n',
  ],
  ['replaces a line written without spaces', '[s]\nk=old\n', 's', 'k', 'new', '[s]\nk = new\n'],
  ['replaces a key containing =', '[jwt_keys]\nrsa:abc= = old\n', 'jwt_keys', 'rsa:abc=', 'new', '[jwt_keys]\nrsa:abc= = new\n'],
  ['touches only the named section', '[a]\nk = 1\n[b]\nk = 2\n', 'b', 'k', '3', '[a]\nk = 1\n[b]\nk = 3\n'],
  ['replaces the last duplicate and drops the earlier ones', '[a]\nk = 1\n[b]\n[a]\nk = 2\n', 'a', 'k', '3', '[a]\n[b]\n[a]\nk = 3\n'],
  ['replaces an empty-value line', '[a]\nk =\n', 'a', 'k', 'v', '[a]\nk = v\n'],
  [
    'inserts after the last key of the section',
    '[a]\nx = 1\ny = 2\n\n; next\n[b]\nz = 3\n',
    'a', 'k', 'v',
    '[a]\nx = 1\ny = 2\nk = v\n\n; next\n[b]\nz = 3\n',
  ],
  ['inserts after the header of an empty section', '[a]\n; none yet\n[b]\nz = 3\n', 'a', 'k', 'v', '[a]\nk = v\n; none yet\n[b]\nz = 3\n'],
  ['inserts after a last line that has no newline', '[a]\nx = 1', 'a', 'k', 'v', '[a]\nx = 1\nk = v'],
  ['keys after an invalid header belong to the open section', '[a]\nx = 1\n[b]oops\nk = 1\n', 'a', 'k', '2', '[a]\nx = 1\n[b]oops\nk = 2\n'],
  ['a key before any section is not in the section', 'k = 1\n[a]\n', 'a', 'k', '2', 'k = 1\n[a]\nk = 2\n'],
  ['keeps CRLF line ends', '[a]\r\nx = 1\r\n', 'a', 'k', 'v', '[a]\r\nx = 1\r\nk = v\r\n'],
  ['appends a new section', '; c\n[a]\nx = 1\n', 'b', 'k', 'v', '; c\n[a]\nx = 1\n\n[b]\nk = v\n'],
  ['appends after text without a final newline', '[a]\nx = 1', 'b', 'k', 'v', '[a]\nx = 1\n\n[b]\nk = v\n'],
  ['appends with the text\'s CRLF', '[a]\r\nx = 1\r\n', 'b', 'k', 'v', '[a]\r\nx = 1\r\n\r\n[b]\r\nk = v\r\n'],
  ['writes a first section into empty text', '', 'b', 'k', 'v', '[b]\nk = v\n'],
  ['appends a dotted section', '', 'replicator.shares', 'k', 'v', '[replicator.shares]\nk = v\n'],
  ['deletes the line, keeping comments', '[a]\n; c\nx = 1\nk = v ; why\ny = 2\n', 'a', 'k', undefined, '[a]\n; c\nx = 1\ny = 2\n'],
  ['deletes every duplicate', '[a]\nk = 1\nx = 2\nk = 3\n', 'a', 'k', undefined, '[a]\nx = 2\n'],
  ['deletes only in the named section', '[a]\nk = 1\n[b]\nk = 2\n', 'b', 'k', undefined, '[a]\nk = 1\n[b]\n'],
  ['deleting a missing key changes nothing', '[a]\n; c\nx = 1', 'a', 'k', undefined, '[a]\n; c\nx = 1'],
  ['deleting from a missing section changes nothing', '[a]\nk = 1\n', 'b', 'k', undefined, '[a]\nk = 1\n'],
];

describe('setIniValue', () => {
  for (const [what, before, section, key, value, after] of editCases) {
    it(what, () => {
      const edited = setIniValue(before, section, key, value);
      assert.equal(edited, after);
      assert.equal(parseIni(edited).get(section)?.get(key), value);
    });
  }

  it('refuses a value that would inject a section', () => {
    assert.throws(() => setIniValue('[a]\n', 'a', 'k', 'x\n[admins]\nevil = 1'), RangeError);
  });

  it('refuses an unrepresentable section or key', () => {
    assert.throws(() => setIniValue('', 'a]b', 'k', 'v'), RangeError);
    assert.throws(() => setIniValue('', 'a', 'k = j', 'v'), RangeError);
  });
});
