import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { type IniSections, isRepresentable, isRepresentableSection, parseIni, setIniValue } from '../../../src/config/ini.js';

// Characters that each break some rule of the format, mixed with ordinary ones.
const tricky = fc.constantFrom('a', 'b', 'Z', '0', '=', ' ', ';', '\t', '[', ']', '#', '.', ':', '\n', '\r', '\x1a', 'é', '\u00a0', '\u2028');
const trickyString = fc.string({ unit: tricky, minLength: 1, maxLength: 8 });

const sectionName = fc.oneof(fc.constantFrom('s', 't', 'chttpd_auth', 'a.b'), trickyString.filter(isRepresentableSection));
const keyName = fc.oneof(fc.constantFrom('k', 'j', 'rsa:x='), trickyString.filter((key) => isRepresentable(key, 'v')));
const entry = fc
  .tuple(keyName, fc.oneof(fc.constantFrom('v', 'true', '=x'), trickyString))
  .filter(([key, value]) => isRepresentable(key, value));

// Documents built from every kind of line the parser distinguishes, valid or not.
const line = fc.oneof(
  sectionName.map((name) => `[${name}]`),
  entry.map(([key, value]) => `${key} = ${value}`),
  entry.map(([key, value]) => `  ${key}=${value} ; comment`),
  keyName.map((key) => `${key} =`),
  fc.constantFrom('; comment', '', 'garbage', '= x', '[bad', '[s]x', '[]', '#k = v'),
  fc.string({ unit: tricky, maxLength: 12 }),
);
const separator = fc.constantFrom('\n', '\r\n', '\r', '\x1a');
const document = fc
  .tuple(fc.array(fc.tuple(line, separator), { maxLength: 12 }), fc.boolean())
  .map(([lines, trailing]) => {
    const text = lines.map(([content, eol]) => content + eol).join('');
    return trailing || lines.length === 0 ? text : text.slice(0, -lines[lines.length - 1][1].length);
  });

function flatten(sections: IniSections): Map<string, string> {
  const flat = new Map<string, string>();
  for (const [section, keys] of sections) for (const [key, value] of keys) flat.set(JSON.stringify([section, key]), value);
  return flat;
}

describe('ini properties', () => {
  it('parseIni never throws', () => {
    fc.assert(fc.property(fc.string({ unit: tricky, maxLength: 60 }), (text) => void parseIni(text)));
    fc.assert(fc.property(fc.string(), (text) => void parseIni(text)));
  });

  it('set then parse gives the value back and leaves every other key untouched', () => {
    fc.assert(
      fc.property(document, sectionName, entry, (text, section, [key, value]) => {
        const expected = flatten(parseIni(text));
        expected.set(JSON.stringify([section, key]), value);
        assert.deepEqual(flatten(parseIni(setIniValue(text, section, key, value))), expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('delete then parse removes the key and leaves every other key untouched', () => {
    fc.assert(
      fc.property(document, sectionName, keyName, (text, section, key) => {
        const expected = flatten(parseIni(text));
        expected.delete(JSON.stringify([section, key]));
        assert.deepEqual(flatten(parseIni(setIniValue(text, section, key, undefined))), expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('a sequence of sets and deletes matches a plain map', () => {
    const operation = fc.tuple(sectionName, keyName, fc.option(entry.map(([, value]) => value), { nil: undefined }));
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 25 }), (operations) => {
        const model = new Map<string, string>();
        let text = '';
        for (const [section, key, value] of operations) {
          text = setIniValue(text, section, key, value);
          if (value === undefined) model.delete(JSON.stringify([section, key]));
          else model.set(JSON.stringify([section, key]), value);
        }
        assert.deepEqual(flatten(parseIni(text)), model);
      }),
      { numRuns: 500 },
    );
  });
});
