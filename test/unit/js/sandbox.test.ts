import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { DesignDoc } from '../../../src/js/sandbox.js';
import { testSandbox } from '../../support/js-sandbox.js';

const sandbox = testSandbox({ workers: 2, timeoutMs: 400 });
after(() => sandbox.close());

const ddoc: DesignDoc = {
  _id: '_design/app',
  _rev: '1-a',
  lib: { util: 'exports.double = function (x) { return 2 * x; }; exports.sibling = require("./other").name; exports.rooted = require("lib/other").name;', other: 'exports.name = "other";' },
  validate_doc_update: 'function (newDoc, oldDoc, userCtx, secObj) { if (!newDoc.type) throw({forbidden: "type required"}); log("checked " + newDoc._id); }',
  // Map functions require from views.lib only, as CouchDB's.
  views: { lib: { util: 'exports.double = function (x) { return 2 * x; };' }, double: { map: 'function (doc) { if (doc.bad) throw new Error("bad doc"); emit(doc.n, require("views/lib/util").double(doc.n)); emit([doc.n], undefined); }', reduce: 'function (keys, values, rereduce) { return sum(values); }' } },
  filters: {
    query: 'function (doc, req) { return doc.n > 1 && req.query.x === "1"; }',
    self: 'function () { return this._id; }',
    env: 'function () { return [typeof isArray, typeof toJSON, typeof sum, typeof log, typeof require, typeof process, typeof setTimeout, typeof globalThis.require]; }',
    parent: 'function () { var u = require("lib/util"); return [u.sibling, u.rooted]; }',
  },
};

describe('the JavaScript sandbox', () => {
  test('validate_doc_update gets its arguments and its thrown object comes back, with log lines', async () => {
    const outcomes = await sandbox.call('db', ddoc, ['validate_doc_update'], [[{ _id: 'a', type: 't' }, null, {}, {}], [{ _id: 'b' }, null, {}, {}]]);
    assert.deepEqual(outcomes, [
      { ok: true, value: null, logs: ['checked a'] },
      { ok: false, kind: 'thrown', error: { forbidden: 'type required' }, logs: [] },
    ]);
  });

  test('shared arguments end every argument list, read-only: no call changes what the next one sees', async () => {
    const sharing: DesignDoc = {
      _id: '_design/sharing',
      _rev: '1-a',
      filters: {
        f: `function (doc, userCtx, secObj) {
          var seen = userCtx.roles.join(',') + '|' + secObj.admins.names.length;
          try { userCtx.roles.push('leaked'); } catch (e) {}
          userCtx.name = 'changed'; secObj.admins.names = ['x'];
          return [doc.n, userCtx.name, seen];
        }`,
      },
    };
    const outcomes = await sandbox.call('db', sharing, ['filters', 'f'], [[{ n: 1 }], [{ n: 2 }]], [{ name: 'bob', roles: ['r'] }, { admins: { names: [] } }]);
    assert.deepEqual(outcomes.map((outcome) => outcome.ok && outcome.value), [[1, 'bob', 'r|0'], [2, 'bob', 'r|0']]);
  });

  test('a map function returns its emits per document, a throwing document fails alone', async () => {
    const outcomes = await sandbox.map('db', ddoc, ['views', 'double', 'map'], [{ n: 1 }, { n: 2, bad: true }, { n: 3 }]);
    assert.deepEqual(outcomes.map((outcome) => (outcome.ok ? outcome.value : outcome.error)), [
      [[1, 2], [[1], null]],
      { error: 'Error', message: 'bad doc' },
      [[3, 6], [[3], null]],
    ]);
  });

  test('reduce and rereduce are calls with CouchDB argument lists', async () => {
    const [reduced] = await sandbox.call('db', ddoc, ['views', 'double', 'reduce'], [[[[1, 'a'], [2, 'b']], [2, 4], false]]);
    assert.deepEqual(reduced, { ok: true, value: 6, logs: [] });
  });

  test('filters see req, the design document as this, and CouchDB helpers only', async () => {
    const [passed, self, env, parent] = await Promise.all([
      sandbox.call('db', ddoc, ['filters', 'query'], [[{ n: 2 }, { query: { x: '1' } }], [{ n: 2 }, { query: {} }]]),
      sandbox.call('db', ddoc, ['filters', 'self'], [[]]),
      sandbox.call('db', ddoc, ['filters', 'env'], [[]]),
      sandbox.call('db', ddoc, ['filters', 'parent'], [[]]),
    ]);
    assert.deepEqual(passed.map((outcome) => outcome.ok && outcome.value), [true, false]);
    assert.deepEqual(self[0], { ok: true, value: '_design/app', logs: [] });
    assert.deepEqual(env[0], { ok: true, value: ['function', 'function', 'function', 'function', 'function', 'undefined', 'undefined', 'function'], logs: [] });
    assert.deepEqual(parent[0], { ok: true, value: ["other", "other"], logs: [] });
  });

  test('check reports functions that do not compile with CouchDB messages', async () => {
    const broken: DesignDoc = { _id: '_design/broken', _rev: '1-b', filters: { bad: 'function (doc {', notfn: '42', ok: 'function () {}' } };
    const errors = await sandbox.check(broken, [['filters', 'bad'], ['filters', 'notfn'], ['filters', 'ok']]);
    assert.match(errors[0]!, /^SyntaxError: .* \(function \(doc \{\)$/);
    assert.equal(errors[1], 'Expression does not eval to a function. (42)');
    assert.equal(errors[2], undefined);
  });

  test('a new revision of a design document is loaded anew', async () => {
    const next: DesignDoc = { ...ddoc, _rev: '2-a', filters: { self: 'function () { return "second"; }' } };
    const [[first], [second]] = await Promise.all([sandbox.call('db', ddoc, ['filters', 'self'], [[]]), sandbox.call('db', next, ['filters', 'self'], [[]])]);
    assert.deepEqual([first!.ok && first!.value, second!.ok && second!.value], ['_design/app', 'second']);
  });

  test('an endless loop fails by the time limit: the rest of its request times out with it, the next request runs', async () => {
    const looping: DesignDoc = { _id: '_design/loop', _rev: '1-c', filters: { f: 'function (doc) { if (doc.loop) while (true) {} return true; }' } };
    const outcomes = await sandbox.call('db', looping, ['filters', 'f'], [[{ loop: true }], [{}]]);
    assert.deepEqual(outcomes.map((outcome) => !outcome.ok && outcome.kind), ['timeout', 'timeout']);
    assert.deepEqual(await sandbox.call('db', looping, ['filters', 'f'], [[{}]]), [{ ok: true, value: true, logs: [] }]);
  });

  test('a 1 GiB allocation or a growing heap fails that call only, by the memory limit', async () => {
    const hungry: DesignDoc = {
      _id: '_design/hungry', _rev: '1-f',
      filters: { f: 'function (doc) { if (doc.big) return new ArrayBuffer(1024 * 1024 * 1024).byteLength; if (doc.grow) { var a = []; for (;;) a.push(new Array(100000).fill(1)); } return doc.n; }' },
    };
    const [big, one] = await sandbox.call('db', hungry, ['filters', 'f'], [[{ big: true }], [{ n: 1 }]]);
    // Growing to the limit takes a while: the next call is a request of its own, with its own time.
    const [grow] = await sandbox.call('db', hungry, ['filters', 'f'], [[{ grow: true }]]);
    const [two] = await sandbox.call('db', hungry, ['filters', 'f'], [[{ n: 2 }]]);
    assert.deepEqual([big, one, grow, two].map((outcome) => (outcome!.ok ? outcome!.value : outcome!.kind)), ['memory', 1, 'memory', 2]);
  });

  test('prototype tampering fails that call and leaves the intrinsics intact', async () => {
    const tampering: DesignDoc = {
      _id: '_design/tamper', _rev: '1-d',
      filters: { strict: 'function () { "use strict"; Object.prototype.evil = 1; }', push: 'function () { Array.prototype.push = null; }', check: 'function () { var a = []; a.push(1); return [({}).evil, a.length, JSON.stringify({a: 1})]; }' },
    };
    const [strict] = await sandbox.call('db', tampering, ['filters', 'strict'], [[]]);
    const [push] = await sandbox.call('db', tampering, ['filters', 'push'], [[]]);
    const [check] = await sandbox.call('db', tampering, ['filters', 'check'], [[]]);
    assert.equal(strict!.ok, false);
    assert.equal(push!.ok, false);
    assert.deepEqual(check, { ok: true, value: [null, 1, '{"a":1}'], logs: [] });
  });

  test('Node is out of reach: require("fs") and process.exit() fail the call', async () => {
    const escaping: DesignDoc = { _id: '_design/escape', _rev: '1-e', filters: { fs: 'function () { return require("fs"); }', exit: 'function () { process.exit(1); }' } };
    const [fs] = await sandbox.call('db', escaping, ['filters', 'fs'], [[]]);
    const [exit] = await sandbox.call('db', escaping, ['filters', 'exit'], [[]]);
    assert.deepEqual(fs!.ok === false && fs!.error, ['error', 'invalid_require_path', 'Object has no property "fs". ' + JSON.stringify(escaping)]);
    assert.deepEqual(exit!.ok === false && exit!.error, { error: 'ReferenceError', message: "'process' is not defined" });
  });
});
