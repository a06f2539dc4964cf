/**
 * `node dist/bench/collation.js`
 *
 * The cost of CouchDB's collation on the selector's hot path: comparing each document's string value
 * with a `$lt`/`$gt` argument (`compare` from src/collation), against comparing the same strings by
 * code point (JavaScript's `<`, what selectors did before they shared the view collation), measured
 * in the same run. Reports nanoseconds per comparison and the ratio to the baseline.
 */
import { compare } from '../src/collation/compare.js';
import { encode } from '../src/collation/encode.js';

const VALUES = 20_000;
const ROUNDS = 20;

/** Deterministic values: ASCII names, accented names, CJK and emoji, as documents hold them. */
function values(): string[] {
  const alphabets = ['abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -', 'aeiouéèêëàâäîïôöùûüçñß', '中文日本語한국어', '\u{1F600}\u{1F680}\u{1F4A9}'];
  let seed = 7;
  const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  return Array.from({ length: VALUES }, () => {
    const alphabet = [...alphabets[next(4) === 0 ? 1 + next(3) : 0]!];
    return Array.from({ length: 4 + next(16) }, () => alphabet[next(alphabet.length)]).join('');
  });
}

function nanosPerCall(texts: readonly string[], argument: string, order: (a: string, b: string) => number): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let round = 0; round < ROUNDS; round++) for (const text of texts) sink += order(text, argument);
  const elapsed = Number(process.hrtime.bigint() - start);
  if (Number.isNaN(sink)) throw new Error('unreachable');
  return elapsed / (ROUNDS * texts.length);
}

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const texts = values();
encode('warm up the weight tables');
nanosPerCall(texts, 'Mango', compare);
const rows: string[] = [];
for (const argument of ['Mango', 'é', '\u{1F600}']) {
  const baseline = nanosPerCall(texts, argument, byCodePoint);
  const collated = nanosPerCall(texts, argument, compare);
  rows.push(`| ${JSON.stringify(argument)} | ${baseline.toFixed(1)} | ${collated.toFixed(1)} | ${(collated / baseline).toFixed(1)}× |`);
}
const encodeStart = process.hrtime.bigint();
for (const text of texts) encode(text);
const encodeNanos = Number(process.hrtime.bigint() - encodeStart) / texts.length;
console.log(`${VALUES} strings, ${ROUNDS} rounds; value-vs-argument comparisons (ns per comparison)\n`);
console.log('| argument | code point (baseline) | collation | ratio |\n|---|---|---|---|');
console.log(rows.join('\n'));
console.log(`\nencode of one string (sort key): ${encodeNanos.toFixed(0)} ns`);
