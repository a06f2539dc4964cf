import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, type QuickJSSyncVariant } from 'quickjs-emscripten-core';
import { compileNative, member, UNSURE } from '../../../src/js/native-subset.js';

/** Runs a compiled function on `doc`, recording its `index` calls; 'unsure' when it would defer to the sandbox. */
function run(source: string, doc: unknown): unknown[][] | 'unsure' {
  const fn = compileNative(source, ['index']);
  assert.ok(fn, `compiles: ${source}`);
  const calls: unknown[][] = [];
  try {
    fn(doc, { index: (args) => void calls.push(args) });
  } catch (error) {
    if (error === UNSURE) return 'unsure';
    throw error;
  }
  return calls;
}

describe('the native subset of design functions', () => {
  test("QuickJS's built-in prototypes name nothing Node's do not (a read the host calls undefined is undefined there too)", async () => {
    const quickjs = await newQuickJSWASMModuleFromVariant(variant as unknown as QuickJSSyncVariant);
    const vm = quickjs.newContext();
    try {
      const code = 'JSON.stringify([Object.prototype, Array.prototype, String.prototype, Number.prototype, Boolean.prototype].map(function (p) { var names = []; for (var o = p; o; o = Object.getPrototypeOf(o)) names = names.concat(Object.getOwnPropertyNames(o)); return names; }))';
      const handle = vm.unwrapResult(vm.evalCode(code));
      const lists = JSON.parse(vm.getString(handle)) as string[][];
      handle.dispose();
      const hosts = [{}, [], '', 0, false];
      lists.forEach((names, i) => {
        assert.ok(names.length > 10);
        // An array's or a string's length is answered (as the same number).
        for (const name of names.filter((name) => name !== 'length' || (i !== 1 && i !== 2))) assert.throws(() => member(hosts[i], name), (error: unknown) => error === UNSURE, `${name} of ${JSON.stringify(hosts[i])}`);
      });
    } finally {
      vm.dispose();
    }
  });

  const outside = [
    ['a loop', 'function (doc) { for (var i = 0; i < 3; i++) index("double", "n", i); }'],
    ['an assignment', 'function (doc) { doc.a = 1; index("text", "a", doc.a); }'],
    ['a declaration', 'function (doc) { var t = doc.title; index("text", "t", t); }'],
    ['another global', 'function (doc) { index("double", "n", Math.max(doc.a, 1)); }'],
    ['log', 'function (doc) { log(doc._id); }'],
    ['a method call', 'function (doc) { index("text", "t", doc.t.toLowerCase()); }'],
    ['this', 'function (doc) { index("text", "t", this.language); }'],
    ['two arguments', 'function (doc, req) { index("text", "t", doc.t); }'],
    ['a function named as the host', 'function index(doc) { index("text", "t", doc.t); }'],
    ['a parameter named as the host', 'function (index) { index("text", "t", "x"); }'],
    ['a directive', 'function (doc) { "use strict"; index("text", "t", doc.t); }'],
    ['a returned value', 'function (doc) { return 1; }'],
    ['an octal literal', 'function (doc) { index("double", "n", 010); }'],
    ['a __proto__ key', 'function (doc) { index("text", "t", doc.t, {__proto__: {store: true}}); }'],
    ['a spread', 'function (doc) { index(...doc.args); }'],
    ['code around the function', 'var x = 1; (function (doc) { index("text", "t", doc.t); })'],
    ['an arrow function', '(doc) => index("text", "t", doc.t)'],
    ['not JavaScript', 'function (doc) { index("text", "t", doc.t'],
    ['optional chaining', 'function (doc) { index("text", "t", doc?.t); }'],
  ];
  for (const [what, source] of outside) {
    test(`a function with ${what} is left to the sandbox`, () => assert.equal(compileNative(source!, ['index']), undefined));
  }

  test('reads, tests and calls answer as JavaScript does', () => {
    const source = `function (doc) {
      if (doc.title && typeof doc.title === 'string') index('text', 'title', doc.title, {store: true});
      if (doc.tags.length > 1) index('string', 'tag', doc.tags[1]); else index('string', 'tag', 'none');
      index('double', 'price', doc.price * 2 + 1);
      index('text', 'both', doc.title + ' ' + doc.sub.name);
      if (!doc.missing && doc.missing === undefined && doc.n == null) return;
      index('text', 'never', 'x');
    };  `;
    assert.deepEqual(run(source, { title: 'Dune', tags: ['a', 'b'], price: 4, sub: { name: 'x' } }), [
      ['text', 'title', 'Dune', { store: true }],
      ['string', 'tag', 'b'],
      ['double', 'price', 9],
      ['text', 'both', 'Dune x'],
    ]);
  });

  test('what JavaScript would throw at, or convert unlike JSON, is unsure', () => {
    assert.equal(run('function (doc) { index("text", "t", doc.a.b); }', {}), 'unsure');
    assert.equal(run('function (doc) { if (doc.constructor) index("text", "t", "x"); }', {}), 'unsure');
    assert.equal(run('function (doc) { if (doc.a == doc.b) index("text", "t", "x"); }', { a: [1], b: 1 }), 'unsure');
    assert.equal(run('function (doc) { index("text", "t", doc.a + doc.b); }', { a: 'x', b: 1 }), 'unsure');
    assert.equal(run('function (doc) { index("text", "t", doc.s[0]); }', { s: 'abc' }), 'unsure');
    assert.deepEqual(run('function (doc) { if (doc.__proto__) index("text", "t", doc.__proto__); }', JSON.parse('{"__proto__": "own"}')), [['text', 't', 'own']]);
  });
});
