import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';

/**
 * CommonJS `require` in design functions as CouchDB's share/server/util.js resolves it; map
 * functions see `views.lib` only (CouchDB's state.js compiles them against `{views: {lib}}`).
 */
describeOnEachBackend('require of modules stored in the design document', (server: () => TestServer) => {
  const ddoc = {
    _id: '_design/mods',
    lib: { greet: 'var fmt = require("./fmt"); exports.hello = function (n) { return fmt.wrap("hello " + n); };', fmt: 'exports.wrap = function (s) { return "[" + s + "]"; };' },
    views: {
      lib: { keys: 'exports.key = function (doc) { return doc.name.toUpperCase(); }; exports.runs = (exports.runs || 0) + 1;', up: 'exports.k = require("./keys").key;' },
      by_name: { map: 'function (doc) { if (doc.name) emit(require("views/lib/up").k(doc), null); }' },
      reach: { map: `function (doc) { if (!doc.name) return; var seen; try { require("lib/greet"); seen = "reached"; } catch (e) { seen = e; } emit(doc._id, seen); }` },
    },
    shows: {
      hi: 'function (doc, req) { return require("lib/greet").hello(req.query.n) + require("views/lib/keys").key({ name: "x" }); }',
      missing: 'function () { return require("lib/nothing"); }',
      upward: 'function () { return require("../lib/greet"); }',
    },
  };

  before(async () => {
    assert.equal((await server().admin('/mods', { method: 'PUT' })).status, 201);
    assert.equal((await server().admin('/mods/_design/mods', { method: 'PUT', body: ddoc })).status, 201);
    assert.equal((await server().admin('/mods/a', { method: 'PUT', body: { name: 'ann' } })).status, 201);
  });

  test('a show function requires a module of the design document, which requires a sibling with ./', async () => {
    const res = await server().admin('/mods/_design/mods/_show/hi?n=bob');
    assert.deepEqual([res.status, res.text], [200, '[hello bob]X']);
  });

  test('a map function requires views.lib modules, relative paths included', async () => {
    const res = await server().admin('/mods/_design/mods/_view/by_name');
    assert.equal(res.status, 200);
    assert.deepEqual((res.body.rows as { key: unknown }[]).map((row) => row.key), ['ANN']);
  });

  test('a map function cannot reach modules outside views.lib: invalid_require_path against {views: {lib}}', async () => {
    const res = await server().admin('/mods/_design/mods/_view/reach');
    const value = (res.body.rows as { value: unknown }[])[0]!.value as unknown[];
    assert.deepEqual(value.slice(0, 2), ['error', 'invalid_require_path']);
    assert.match(String(value[2]), /^Object has no property "lib"\. \{"views":\{"lib":\{/);
  });

  test('a missing module or a path above the root answers 500 with CouchDB\'s invalid_require_path', async () => {
    const missing = await server().admin('/mods/_design/mods/_show/missing');
    assert.equal(missing.status, 500);
    assert.equal(missing.body.error, 'invalid_require_path');
    assert.match(String(missing.body.reason), /^Object has no property "nothing"\./);
    const upward = await server().admin('/mods/_design/mods/_show/upward');
    assert.deepEqual([upward.status, upward.body.error], [500, 'invalid_require_path']);
    assert.match(String(upward.body.reason), /^Object has no parent /);
  });

  test('a module body runs once per request: what it keeps does not reach the next request', async () => {
    const counter = { _id: '_design/count', lib: { n: 'exports.n = (typeof seen === "undefined" ? 0 : 1); var k = 0; exports.next = function () { return ++k; };' },
      shows: { c: 'function () { var m = require("lib/n"); require("lib/n"); return String(m.next()) + String(require("lib/n").next()); }' } };
    assert.equal((await server().admin('/mods/_design/count', { method: 'PUT', body: counter })).status, 201);
    for (let i = 0; i < 3; i++) assert.equal((await server().admin('/mods/_design/count/_show/c')).text, '12');
  });
});
