import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalRevision, compareRevisions, parseRevision, parseRevisionId } from '../../../src/revisions/revision-text.js';

const MD5 = '0123456789abcdef0123456789abcdef';

describe('parseRevision takes what CouchDB’s couch_doc:parse_rev takes', () => {
  const cases: [string, ReturnType<typeof parseRevision>][] = [
    ['1-abc', { generation: 1, hash: 'abc' }],
    [`12-${MD5}`, { generation: 12, hash: MD5 }],
    ['3-totally_fake_rev', { generation: 3, hash: 'totally_fake_rev' }],
    ['2-x', { generation: 2, hash: 'x' }],
    ['1-', { generation: 1, hash: '' }],
    ['1-ab c', { generation: 1, hash: 'ab c' }],
    ['1-a-b', { generation: 1, hash: 'a-b' }],
    ['1-__proto__', { generation: 1, hash: '__proto__' }],
    ['1-é', { generation: 1, hash: 'é' }],
    ['01-abc', { generation: 1, hash: 'abc' }],
    ['0-1', { generation: 0, hash: '1' }],
    [`1-${MD5.toUpperCase()}`, { generation: 1, hash: MD5 }],
    [`1-${'g'.repeat(32)}`, undefined], // 32 bytes must be an MD5 in hex
    [`1-${'é'.repeat(16)}`, undefined], // 32 UTF-8 bytes, not hex
    [`1-${'é'.repeat(15)}a`, { generation: 1, hash: `${'é'.repeat(15)}a` }], // 31 bytes
    ['1-a\u0000b', undefined],
    ['1-\ud800', undefined],
    ['1-\udc00a', undefined],
    ['-abc', undefined],
    ['+1-abc', undefined],
    ['x-abc', undefined],
    ['abc', undefined],
    ['', undefined],
    ['99999999999999999999-a', undefined],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseRevision(input), expected);
    });
  }
});

describe('canonicalRevision', () => {
  it('gives the text as stored: decimal generation, an MD5 id in lower case', () => {
    assert.equal(canonicalRevision(`007-${MD5.toUpperCase()}`), `7-${MD5}`);
    assert.equal(canonicalRevision('2-x'), '2-x');
  });
  it('is undefined for non-strings', () => {
    for (const value of [undefined, null, 1, ['1-a'], { rev: '1-a' }]) assert.equal(canonicalRevision(value), undefined);
  });
  it('never yields NUL or a lone surrogate, and is idempotent', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const rev = canonicalRevision(`1-${text}`);
        if (rev === undefined) return;
        assert.ok(!rev.includes('\u0000'));
        assert.ok(!/[\ud800-\udfff]/.test(rev.replace(/[\ud800-\udbff][\udc00-\udfff]/g, '')));
        assert.equal(canonicalRevision(rev), rev);
      }),
    );
  });
  it('parseRevisionId keeps an empty id', () => assert.equal(parseRevisionId(''), ''));
});

describe('compareRevisions orders as CouchDB’s {Pos, RevId} binaries', () => {
  const cases: [string, string, number][] = [
    ['1-b', '1-a', 1],
    ['1-a', '1-b', -1],
    ['2-a', '1-f', 1],
    ['10-a', '9-f', 1], // numerically, not as strings
    ['3-abc', '3-abc', 0],
    ['1-ab', '1-abc', -1],
    ['1-', '1-a', -1],
    ['2-y', '2-x', 1],
    [`1-f${MD5.slice(1)}`, `1-${MD5}`, 1],
    // An MD5 id is compared as its 16 bytes (0xa0 …), other ids as UTF-8 ('b' is 0x62).
    [`1-a${'0'.repeat(31)}`, '1-b', 1],
    [`1-${'0'.repeat(32)}`, '1-b', -1],
    // UTF-8 bytes, not UTF-16 code units: U+10000 (F0 …) is above U+FFFF (EF …).
    ['1-\u{10000}', '1-\uffff', 1],
  ];
  for (const [a, b, sign] of cases) {
    it(`${JSON.stringify(a)} vs ${JSON.stringify(b)} → ${sign}`, () => {
      assert.equal(Math.sign(compareRevisions(a, b)), sign);
      assert.equal(Math.sign(compareRevisions(b, a)), -sign || 0);
    });
  }
  it('is a total order on accepted revisions (antisymmetric, transitive)', () => {
    const rev = fc.tuple(fc.integer({ min: 1, max: 3 }), fc.oneof(fc.string({ unit: 'binary' }), fc.uint8Array({ minLength: 16, maxLength: 16 }).map((bytes) => Buffer.from(bytes).toString('hex'))))
      .map(([generation, id]) => canonicalRevision(`${generation}-${id}`))
      .filter((value): value is string => value !== undefined);
    fc.assert(
      fc.property(rev, rev, rev, (a, b, c) => {
        assert.equal(Math.sign(compareRevisions(a, b)), -Math.sign(compareRevisions(b, a)) || 0);
        if (compareRevisions(a, b) <= 0 && compareRevisions(b, c) <= 0) assert.ok(compareRevisions(a, c) <= 0);
      }),
    );
  });
});
