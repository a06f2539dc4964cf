import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

/**
 * Issue 32 item 10: nothing a design-document function keeps (a global, a module's closure, the
 * global object's shape) reaches the next caller, nor another database holding the same design
 * document. Every probe document is refused with what the function could see as the reason.
 */
describe('design-document functions keep nothing between callers or databases', () => {
  let server: TestServer;
  const keeper = {
    _id: '_design/keeper',
    lib: { state: 'exports.seen = [];' },
    validate_doc_update: `function (newDoc, oldDoc, userCtx) {
      var seen = require('lib/state').seen;
      if (newDoc.probe) throw({forbidden: JSON.stringify({global: typeof lastDb === 'undefined' ? null : lastDb, module: seen,
        pinned: typeof pinned === 'undefined' ? null : pinned, inherited: globalThis.inherited === undefined ? null : globalThis.inherited})});
      seen.push(userCtx.db);
      lastDb = userCtx.db;
      if (newDoc.pin) Object.defineProperty(globalThis, 'pinned', { value: userCtx.db, configurable: false });
      if (newDoc.reparent) Object.setPrototypeOf(globalThis, { inherited: userCtx.db });
    }`,
  };
  const probe = async (db: string): Promise<unknown> => {
    const res = await server.admin(`/${db}/probe-${Math.random()}`, { method: 'PUT', body: { probe: true } });
    assert.equal(res.status, 403);
    return JSON.parse(res.body.reason as string);
  };
  const nothing = { global: null, module: [], pinned: null, inherited: null };

  before(async () => {
    server = await startServer();
    for (const db of ['first', 'second']) {
      assert.equal((await server.admin(`/${db}`, { method: 'PUT' })).status, 201);
      assert.equal((await server.admin(`/${db}/_design/keeper`, { method: 'PUT', body: keeper })).status, 201);
    }
  });
  after(async () => server.close());

  test('issue 32 item 10: a global or a module closure written by one write is gone for the next write', async () => {
    assert.equal((await server.admin('/first/a', { method: 'PUT', body: {} })).status, 201);
    assert.deepEqual(await probe('first'), nothing);
  });

  test('issue 32 item 10: two databases holding the same design document share no state: one never sees the other\'s userCtx', async () => {
    assert.equal((await server.admin('/first/b', { method: 'PUT', body: {} })).status, 201);
    assert.deepEqual(await probe('second'), nothing);
  });

  test('issue 32 item 10: a non-configurable global or a new prototype of the global object does not reach the next write', async () => {
    assert.equal((await server.admin('/first/c', { method: 'PUT', body: { pin: true } })).status, 201);
    assert.deepEqual(await probe('first'), nothing);
    assert.equal((await server.admin('/first/d', { method: 'PUT', body: { reparent: true } })).status, 201);
    assert.deepEqual(await probe('first'), nothing);
  });

  test('issue 32 item 10: within one _bulk_docs request, implicit globals still work inside each call', async () => {
    const sloppy = { _id: '_design/sloppy', validate_doc_update: 'function (newDoc) { total = 0; for (i = 0; i < 3; i++) total += i; if (total !== 3) throw({forbidden: "total " + total}); }' };
    assert.equal((await server.admin('/second/_design/sloppy', { method: 'PUT', body: sloppy })).status, 201);
    const res = await server.admin('/second/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 's1' }, { _id: 's2' }] } });
    assert.deepEqual(res.body.map((row: { ok?: boolean }) => row.ok), [true, true]);
  });
});
