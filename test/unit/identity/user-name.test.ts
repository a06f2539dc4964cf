import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAcceptableUserName } from '../../../src/identity/user-name.js';
import { perUserDatabaseName } from '../../../src/databases/per-user.js';

const REFUSED: [string, string][] = [
  ['NUL', '\u0000'],
  ['every one-digit byte', '\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u000b\u000c\u000e\u000f'],
  ['TAB, LF, CR', 'a\tb\nc\rd'],
  ['U+001F', '\u001f'],
  ['DEL', '\u007f'],
  ['C1 start, NEL, end', '\u0080\u0085\u009f'],
  ['a lone high surrogate', '\ud83d'],
  ['a lone low surrogate', '\ude00'],
  ['surrogates in the wrong order', '\ude00\ud83d'],
];
const ACCEPTED: [string, string][] = [
  ['ASCII', 'bob'],
  ['a space', 'bob smith'],
  ['U+00A0, the first character after C1', '\u00a0'],
  ['letters beyond ASCII', 'Zoë ß'],
  ['a surrogate pair', '😀'],
  ['format characters (not controls)', 'a\u200bb\u202e'],
];

for (const [what, name] of REFUSED) test(`a user name with ${what} is refused`, () => assert.equal(isAcceptableUserName(`x${name}y`), false));
for (const [what, name] of ACCEPTED) test(`a user name with ${what} is accepted`, () => assert.equal(isAcceptableUserName(name), true));

test('accepted names give every UTF-8 byte two hex digits, so per-user database names cannot collide', () => {
  for (let code = 0x20; code <= 0x2fff; code++) {
    const name = String.fromCharCode(code);
    if (!isAcceptableUserName(name)) continue;
    assert.equal(perUserDatabaseName('', name).length, Buffer.byteLength(name, 'utf8') * 2, `U+${code.toString(16)}`);
  }
  assert.equal(isAcceptableUserName('\u0006&\u000f\u0006\u0002'), false, "bob's twin");
});
