/**
 * Index functions of the native subset answer on the host exactly as in the sandbox: random
 * functions drawn from the subset's grammar, over random documents, give the same outcomes (fields,
 * failures and their messages, bounds) with the native path as with every document in QuickJS.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { indexNativeFirst, nativeIndexFunction } from '../../../src/js/native-index.js';
import type { Limits } from '../../../src/js/protocol.js';
import type { DesignDoc } from '../../../src/js/sandbox.js';
import { testSandbox } from '../../support/js-sandbox.js';

const LIMITS: Limits = { maxEmits: 4, maxEmitBytes: 600, timeoutMs: 30_000, memoryBytes: 32 * 1024 * 1024 };

const LEAVES = ['doc', 'doc.a', 'doc.b', 'doc.n', 'doc.tags', 'doc.tags[0]', 'doc["tags"].length', 'doc.o.x', 'doc.a.length', 'doc.toString', 'doc.missing', 'doc.o.valueOf', 'undefined', 'null', '"s"', "'w x'", '3', '0', '2.5', 'true', 'false', '{}', '"object"', '"number"', '"string"', '"undefined"', '"boolean"'];
const OPERATORS = ['===', '!==', '==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '&&', '||', '??'];

const { expression } = fc.letrec((tie) => ({
  expression: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...LEAVES),
    tie('expression').map((e) => `!(${e})`),
    tie('expression').map((e) => `typeof (${e})`),
    tie('expression').map((e) => `-(${e})`),
    fc.tuple(tie('expression'), fc.constantFrom(...OPERATORS), tie('expression')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
    fc.tuple(tie('expression'), tie('expression'), tie('expression')).map(([a, b, c]) => `(${a}) ? (${b}) : (${c})`),
  ) as fc.Arbitrary<string>,
}));

const typedCall = fc
  .tuple(fc.constantFrom('"text", "f"', '"string", "g"', '"double", "h"', '"stored", "i"'), expression, fc.constantFrom('', ', {store: true}', ', {facet: doc.flag}'))
  .map(([head, value, options]) => `index(${head}, ${value}${options});`);

const anyCall = fc
  .tuple(
    fc.oneof(fc.constantFrom('"text"', '"string"', '"double"', '"stored"', '"date"'), expression),
    fc.oneof(fc.constantFrom('"f"', '"g"', '"_x"', 'doc.a'), expression),
    expression,
    fc.constantFrom('', ', {store: true}', ', {facet: true, store: doc.flag}', ', doc.o', ', null', ', doc.tags'),
  )
  .map(([type, name, value, options]) => `index(${type}, ${name}, ${value}${options});`);
const indexCall = fc.oneof(typedCall, anyCall);

const { statement } = fc.letrec((tie) => ({
  statement: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    indexCall,
    fc.constant('return;'),
    fc.tuple(expression, tie('statement'), tie('statement')).map(([test, then, otherwise]) => `if (${test}) ${then} else ${otherwise}`),
    fc.tuple(expression, tie('statement')).map(([test, then]) => `if (${test}) { ${then} }`),
    fc.array(tie('statement'), { maxLength: 4 }).map((body) => `{ ${body.join(' ')} }`),
  ) as fc.Arbitrary<string>,
}));

/** Functions as users write them, run over the same random documents. */
const WRITTEN = [
  'if (typeof doc.a == "object") index("string", "kind", doc.a === null ? "null" : "object"); index("stored", "t", typeof doc.a);',
  'if (typeof doc.n === "number") { index("double", "n", doc.n); index("double", "neg", -doc.n); index("double", "zero", doc.n * 0); }',
  'if (doc.tags && doc.tags.length) index("text", "tags", doc.tags[0] + "", {store: true});',
  'if (doc.a) { index("text", "a", doc.a); } if (doc.o && doc.o.x) index("string", "x", doc.o.x, {facet: true});',
].map((body) => [body]);

const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -3, max: 3 }), fc.boolean(), fc.constant(null));
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 }));
const documents = fc.array(
  fc.record({ a: value, b: value, n: value, tags: fc.oneof(fc.array(scalar, { maxLength: 3 }), value), o: fc.oneof(fc.record({ x: value }), value), flag: value }, { requiredKeys: [] }),
  { minLength: 1, maxLength: 12 },
);

describe('index functions of the native subset', () => {
  const inQuickJs = testSandbox({ ...LIMITS, native: false });
  after(() => inQuickJs.close());

  test('answer every document as the sandbox does, and answer most of them on the host', async () => {
    let [documentsSeen, onHost, rev] = [0, 0, 0];
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constantFrom(...WRITTEN), fc.array(statement, { minLength: 1, maxLength: 4 })), documents, async (body, docs) => {
        const source = `function (doc) { ${body.join('\n')} }`;
        const ddoc: DesignDoc = { _id: '_design/s', _rev: `${++rev}-a`, nouveau: { t: { index: source } } };
        const path = ['nouveau', 't', 'index'];
        const native = nativeIndexFunction(ddoc, path);
        assert.ok(native, `in the subset: ${source}`);
        const texts = docs.map((doc, i) => JSON.stringify({ _id: `d${i}`, ...doc }));
        let sent = 0;
        const mixed = await indexNativeFirst(native, texts, LIMITS, (rest) => {
          sent += rest.length;
          return inQuickJs.index('db', ddoc, path, rest);
        });
        assert.deepStrictEqual(mixed, await inQuickJs.index('db', ddoc, path, texts), source);
        [documentsSeen, onHost] = [documentsSeen + texts.length, onHost + texts.length - sent];
      }),
      { numRuns: 300, seed: 391 },
    );
    // Most drawn documents fail (reads of null, refused types) and go to the sandbox; many must not.
    assert.ok(onHost > documentsSeen / 4, `${onHost} of ${documentsSeen} documents answered on the host`);
  });
});
