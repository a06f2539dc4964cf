import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { DesignDoc } from '../../../src/js/sandbox.js';
import { testSandbox } from '../../support/js-sandbox.js';

/** Issue 32 item 10, inside the sandbox: closures and function objects keep nothing for the next caller. */
describe('no state from one caller to the next', () => {
  const sandbox = testSandbox();
  after(() => sandbox.close());
  const ddoc: DesignDoc = {
    _id: '_design/state',
    _rev: '1-a',
    filters: {
      closure: '(function () { var seen = []; return function (doc) { seen.push(doc.who); return seen; }; })()',
      own: 'function self(doc) { self.seen = (self.seen || []).concat([doc.who]); return self.seen || null; }',
    },
  };
  const values = (outcomes: { ok: boolean; value?: unknown }[]): unknown[] => outcomes.map((outcome) => (outcome.ok ? outcome.value : outcome));

  test('issue 32 item 10: an IIFE\'s closure lives for one request only: the next caller starts afresh', async () => {
    assert.deepEqual(values(await sandbox.call('db', ddoc, ['filters', 'closure'], [[{ who: 'alice' }], [{ who: 'alice' }]])), [['alice'], ['alice', 'alice']]);
    assert.deepEqual(values(await sandbox.call('db', ddoc, ['filters', 'closure'], [[{ who: 'bob' }]])), [['bob']]);
  });

  test('issue 32 item 10: a plain function is frozen: it cannot keep a property for the next call', async () => {
    assert.deepEqual(values(await sandbox.call('db', ddoc, ['filters', 'own'], [[{ who: 'alice' }]])), [null]);
    assert.deepEqual(values(await sandbox.call('db', ddoc, ['filters', 'own'], [[{ who: 'bob' }]])), [null]);
  });
});
