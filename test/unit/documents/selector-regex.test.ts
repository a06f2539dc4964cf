import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { RE2JS } from 're2js';
import { MAX_SELECTOR_DEPTH, MAX_SELECTOR_NODES, matchesSelector, parseSelector } from '../../../src/documents/selector.js';
import { MAX_MATCH_COST, MAX_PROGRAM_SIZE, compileRegex, estimatedProgramSize } from '../../../src/documents/selector-regex.js';
import { CouchError } from '../../../src/errors/couch-error.js';

const SELECTOR_MODULE = new URL('../../../src/documents/selector.js', import.meta.url).href;

/**
 * Runs one selector match in a worker, so that a catastrophic backtracking engine cannot hang the
 * test runner: the worker is ended after `deadlineMs` and the match counts as never finished.
 */
function matchInWorker(pattern: string, value: string, deadlineMs: number): Promise<{ finished: boolean; matched?: boolean }> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.module).then(({ parseSelector, matchesSelector }) => {
      const selector = parseSelector({ v: { $regex: workerData.pattern } });
      parentPort.postMessage(matchesSelector(selector, { _id: 'x', v: workerData.value }));
    });`;
  const worker = new Worker(code, { eval: true, workerData: { module: SELECTOR_MODULE, pattern, value } });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve({ finished: false });
    }, deadlineMs);
    worker.once('message', (matched: boolean) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve({ finished: true, matched });
    });
    worker.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

const matches = (pattern: string, value: string): boolean => matchesSelector(parseSelector({ v: { $regex: pattern } }), { _id: 'x', v: value });

function assertRefused(selector: unknown, reason: RegExp): void {
  assert.throws(
    () => parseSelector(selector),
    (error: unknown) => error instanceof CouchError && error.status === 400 && error.error === 'bad_request' && reason.test(error.reason),
  );
}

describe('$regex is matched in linear time (RE2)', () => {
  // A backtracking engine needs about 2^n steps for ^(a+)+$ over n a's and a mismatch: 2^28 took
  // 2.5 s; 2^5000 never ends. RE2 needs a few milliseconds; the deadline only catches the old engine.
  it('^(a+)+$ over 5 000 a\'s and a mismatch ends (no catastrophic backtracking)', async () => {
    const outcome = await matchInWorker('^(a+)+$', `${'a'.repeat(5000)}!`, 20_000);
    assert.deepEqual(outcome, { finished: true, matched: false });
  });

  it('^(a+)+$ over a value 100 times longer still ends within the same generous deadline', async () => {
    const outcome = await matchInWorker('^(a+)+$', `${'a'.repeat(500_000)}!`, 20_000);
    assert.deepEqual(outcome, { finished: true, matched: false });
  });
});

describe('$regex semantics (PCRE syntax, RE2 engine)', () => {
  const cases: [string, string, string, boolean][] = [
    ['matches anywhere in the value (unanchored, as re:run)', 'b', 'abc', true],
    ['^ anchors at the start', '^b', 'abc', false],
    ['$ anchors at the end', 'c$', 'abc', true],
    ['$ does not match before a final newline (PCRE would)', 'c$', 'abc\n', false],
    ['\\A and \\z anchor the whole value', '\\Aabc\\z', 'abc', true],
    ['(?m) makes ^ match after a newline', '(?m)^b', 'a\nb', true],
    ['a character class with a range', '^[0-9a-f]+$', 'deadbeef', true],
    ['a character class refuses others', '^[0-9a-f]+$', 'xyz', false],
    ['\\d is ASCII digits', '^\\d{4}-\\d{2}$', '2024-05', true],
    ['POSIX classes', '^[[:alpha:]]+$', 'abc', true],
    ['. matches one code point, not one UTF-16 unit', '^.$', '😀', true],
    ['unicode letters by property', '^\\p{Greek}+$', 'αβγ', true],
    ['unicode literals', '^café$', 'café', true],
    ['(?i) folds case', '(?i)^note-', 'NOTE-1', true],
    ['(?i) folds non-ASCII case', '(?i)^é', 'É', true],
    ['without (?i) case matters', '^note-', 'NOTE-1', false],
    ['alternation', '^(cat|dog)$', 'dog', true],
    ['counted repetition', '^a{2,3}$', 'aaaa', false],
    ['named groups are accepted', '^(?P<y>\\d+)$', '42', true],
    ['. does not match a newline without (?s)', '^a.b$', 'a\nb', false],
  ];
  for (const [title, pattern, value, expected] of cases) {
    it(`${title}: ${JSON.stringify(pattern)} on ${JSON.stringify(value)} → ${expected}`, () => {
      assert.equal(matches(pattern, value), expected);
    });
  }

  it('non-string values never match', () => {
    const selector = parseSelector({ v: { $regex: '.*' } });
    for (const v of [1, null, true, ['a'], { a: 'a' }]) assert.equal(matchesSelector(selector, { _id: 'x', v }), false);
  });

  it('a pattern used twice in one selector is compiled once', () => {
    const selector = parseSelector({ $or: [{ a: { $regex: '^x' } }, { b: { $regex: '^x' } }, { c: { $regex: '^y' } }] });
    assert.deepEqual([...selector.regexes.keys()], ['^x', '^y']);
    assert.equal(matchesSelector(selector, { _id: 'd', b: 'xy' }), true);
  });
});

describe('$regex refusals are 400 bad_request naming the reason', () => {
  const unsupported: [string, string][] = [
    ['a backreference', '(a)\\1'],
    ['a lookahead', 'a(?=b)'],
    ['a negative lookahead', 'a(?!b)'],
    ['a lookbehind', '(?<=a)b'],
    ['a negative lookbehind', '(?<!a)b'],
    ['a possessive quantifier', 'a++'],
    ['an atomic group', '(?>a)'],
  ];
  for (const [title, pattern] of unsupported) {
    it(`${title} (${pattern}) is refused as not supported by RE2`, () => {
      assertRefused({ v: { $regex: pattern } }, /^Bad argument for operator \$regex: .*not supported/);
    });
  }

  it('a pattern that does not parse is refused with RE2\'s description', () => {
    assertRefused({ v: { $regex: '(' } }, /^Bad argument for operator \$regex: "\(": missing closing \)/);
  });

  it(`a pattern over ${MAX_PROGRAM_SIZE} RE2 instructions is refused before it is compiled`, () => {
    assertRefused({ v: { $regex: '(x{1000})'.repeat(100) } }, /too large/);
    assertRefused({ v: { $regex: 'x{1000}' } }, /too large/);
  });

  it('a long pattern is refused', () => {
    assertRefused({ v: { $regex: 'a'.repeat(5000) } }, /limited to 2000 characters/);
  });

  it('a match whose worst case (value length × program size) is over the bound is refused, not run', () => {
    const regex = compileRegex('[ab]*a[ab]{20}c');
    const longest = Math.floor(MAX_MATCH_COST / regex.programSize);
    assert.equal(regex.test('a'.repeat(longest - 1)), false);
    assert.throws(() => regex.test('a'.repeat(longest + 1)), (error: unknown) => error instanceof CouchError && error.status === 400 && /too long to match/.test(error.reason));
  });
});

describe('the program-size estimate', () => {
  it('is never below the compiled program size', () => {
    const patterns = ['abc', '^(a+)+$', 'x{10}', '(ab){3,7}', '(?i)[a-z]+@[a-z]+\\.(com|org)', '\\Qa.b\\E{5}', '\\p{Greek}{20}', '[]a]{4}', '[[:digit:]]{2,}', '((a|b){3}c){4}', '.{0,400}', '(?:x{2}){30}', 'a*?b+?c??'];
    for (const pattern of patterns) {
      const actual = RE2JS.compile(pattern).programSize();
      assert.ok(estimatedProgramSize(pattern) >= actual, `${pattern}: estimate ${estimatedProgramSize(pattern)} < ${actual}`);
    }
  });
});

describe('selector size bounds', () => {
  it(`a selector with more than ${MAX_SELECTOR_NODES} values is refused`, () => {
    assertRefused({ v: { $in: Array.from({ length: MAX_SELECTOR_NODES }, (_, i) => i) } }, /more than 10000 values/);
    assert.doesNotThrow(() => parseSelector({ v: { $in: Array.from({ length: MAX_SELECTOR_NODES - 10 }, (_, i) => i) } }));
  });

  it(`a selector nested deeper than ${MAX_SELECTOR_DEPTH} levels is refused`, () => {
    let deep: Record<string, unknown> = { v: 1 };
    for (let i = 0; i < MAX_SELECTOR_DEPTH; i++) deep = { $and: [deep] };
    assertRefused(deep, /nested deeper than 64 levels/);
  });
});
