import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serialize } from 'node:v8';
import { flatCopy } from '../../../src/json/flat-copy.js';
import { parseIni } from '../../../src/config/ini.js';

/** V8's serializer tags a string by how it is stored: `"` one byte per character, `c` two. */
function storedOneByte(text: string): boolean {
  return serialize(text)[2] === 0x22;
}

const FILE_WITH_ELLIPSIS = '; a comment with an ellipsis…\n[couchdb]\nuuid = 0123abcd\n[chttpd]\nbind_address = 127.0.0.1\n';

describe('flatCopy', () => {
  it('a piece of a text with a non-Latin-1 character is two-byte until copied', () => {
    const piece = FILE_WITH_ELLIPSIS.split('\n')[2]!.slice('uuid = '.length);
    assert.equal(storedOneByte(piece), false);
    const copy = flatCopy(piece);
    assert.equal(copy, piece);
    assert.equal(storedOneByte(copy), true);
  });

  it('text beyond Latin-1 is copied unchanged, lone surrogates included', () => {
    for (const text of ['caf\u00e9 \u2026', '\ud83d\ude00', 'lone \ud800 and \udc00']) assert.equal(flatCopy(text), text);
  });

  it('Latin-1 text keeps every character', () => {
    assert.equal(flatCopy('na\u00efve \u00ff'), 'na\u00efve \u00ff');
    assert.equal(storedOneByte(flatCopy('na\u00efve \u00ff')), true);
  });

  it('sections, keys and values read from an ini file with a "…" comment are one-byte', () => {
    const sections = parseIni(FILE_WITH_ELLIPSIS);
    for (const [section, keys] of sections) {
      assert.equal(storedOneByte(section), true, section);
      for (const [key, value] of keys) {
        assert.equal(storedOneByte(key), true, key);
        assert.equal(storedOneByte(value), true, value);
      }
    }
    assert.equal(sections.get('couchdb')?.get('uuid'), '0123abcd');
  });
});
